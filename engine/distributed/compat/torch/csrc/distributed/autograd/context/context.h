// Debian's libtorch-dev ships c10d/reducer.hpp, which includes this header of distributed
// autograd (RPC), but not the header itself. The Reducer names two of its types: a gradient
// callback (checked equal to its own by a static_assert) and a shared pointer to the context,
// held in a member. Both are declared here exactly as libtorch declares them, so the Reducer's
// layout is the one libtorch_cpu.so was compiled with; nothing else of RPC is used. The
// engine's build puts this stand-in on engine_distributed's include path only when the libtorch in use
// lacks the real header (engine/CMakeLists.txt).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>

namespace torch::distributed::autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};

using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
