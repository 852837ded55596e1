#include "engine/nn/positions.hpp"

#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"

namespace engine::nn {

torch::Tensor zero_based(const torch::Tensor& positions, int64_t count, const std::string& what) {
  if (positions.scalar_type() != torch::kInt64 && positions.scalar_type() != torch::kInt32) {
    throw core::ScriptError(what + ": index must be an integer tensor, got " +
                            core::dtype_name(positions.scalar_type()));
  }
  if (positions.numel() > 0) {
    const int64_t lo = positions.min().item<int64_t>(), hi = positions.max().item<int64_t>();
    if (lo < 1 || hi > count) {
      throw core::ScriptError(what + ": index " + std::to_string(lo < 1 ? lo : hi) +
                              " is out of range 1.." + std::to_string(count));
    }
  }
  return positions.to(torch::kInt64) - 1;
}

torch::Tensor one_based_classes(const torch::Tensor& target) {
  return target.defined() && target.scalar_type() == torch::kInt64 ? target + 1 : target;
}

torch::Tensor zero_based_classes(const torch::Tensor& target) {
  return target.defined() && target.scalar_type() == torch::kInt64 ? target - 1 : target;
}

}  // namespace engine::nn
