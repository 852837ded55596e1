// require 'optim': libtorch's optimizers (plus the engine's fused SGD and Adadelta) and
// learning-rate schedulers, from optimizers.cpp and schedulers.cpp.
#include <vector>

#include "engine/lua/optim/optim_tables.hpp"
#include "engine/lua/runtime/libraries.hpp"

namespace engine::lua {

int open_optim(lua_State* L) {
  require_library(L, "torch");
  define_type(L, OptimizerBox::kTypeName, optimizer_methods(), optimizer_metamethods(),
              gc_userdata<OptimizerBox>);
  define_type(L, SchedulerBox::kTypeName, scheduler_methods(), nullptr, gc_userdata<SchedulerBox>);
  lua_newtable(L);
  set_bindings(L, optimizer_functions());
  set_bindings(L, scheduler_functions());
  return 1;
}

}  // namespace engine::lua
