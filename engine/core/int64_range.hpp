// The smallest and largest value of an int64 tensor in host memory: one pass over its values
// (two reductions and two reads of a scalar took microseconds), for the class checks of the
// loss and of the prefetcher.
#pragma once

#include <torch/types.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace engine::core {

// `values`: int64, on the CPU, not empty.
inline std::pair<int64_t, int64_t> int64_range(const torch::Tensor& values) {
  const auto dense = values.contiguous();
  const int64_t* v = dense.data_ptr<int64_t>();
  const auto [lo, hi] = std::minmax_element(v, v + dense.numel());
  return {*lo, *hi};
}

}  // namespace engine::core
