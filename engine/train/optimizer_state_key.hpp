// The key of a parameter's entry in torch::optim::Optimizer's state: libtorch 1.13 keys it by
// the text of the parameter's TensorImpl address (c10::guts::to_string, since removed), 2.x by
// the address itself. Both come from the optimizer's own map type, so each build uses its own.
#pragma once

#include <torch/optim/optimizer.h>

#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace engine::train {

using OptimizerStateKey =
    typename std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

template <typename Key = OptimizerStateKey>
Key optimizer_state_key(const torch::Tensor& parameter) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;  // what c10::guts::to_string wrote: the pointer through ostream
    text << parameter.unsafeGetTensorImpl();
    return text.str();
  } else {
    return static_cast<Key>(parameter.unsafeGetTensorImpl());
  }
}

}  // namespace engine::train
