#include "engine/nn/sequential.hpp"

#include <c10/util/Exception.h>

#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/nn/describe.hpp"
#include "engine/nn/layer_error.hpp"

namespace engine::nn {

torch::Tensor forward_layer(torch::nn::AnyModule& layer, const torch::Tensor& input) {
  try {
    return layer.forward(input);
  } catch (const LayerError&) {
    throw;
  } catch (const c10::Error& e) {
    // the dtype too when it is not the usual one (a float16 input on the CPU)
    std::string shape = core::shape_string(input.sizes());
    if (input.scalar_type() != torch::kFloat32) {
      shape += " (" + core::dtype_name(input.scalar_type()) + ")";
    }
    throw LayerError("", describe_layer(*layer.ptr()), shape, core::describe_exception(e));
  }
}

void SequentialImpl::push_back(torch::nn::AnyModule layer) {
  register_module(std::to_string(layers_.size()), layer.ptr());
  layers_.push_back(std::move(layer));
}

torch::Tensor SequentialImpl::forward(torch::Tensor input) {
  for (size_t i = 0; i < layers_.size(); ++i) {
    try {
      input = forward_layer(layers_[i], input);
    } catch (const LayerError& e) {
      throw e.nested_in(std::to_string(i));
    }
  }
  return input;
}

void SequentialImpl::pretty_print(std::ostream& stream) const {
  stream << "Sequential";
}

}  // namespace engine::nn
