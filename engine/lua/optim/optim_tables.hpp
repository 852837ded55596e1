// The function tables of require 'optim': optimizers.cpp's and schedulers.cpp's; library.cpp
// assembles them. Internal to engine/lua.
#pragma once

#include "engine/lua/optim/optim_value.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/torch/tensor_value.hpp"
#include "engine/train/spec.hpp"

namespace engine::lua {

const Binding* optimizer_functions();     // optim.SGD, optim.Adam, ...
const Binding* optimizer_methods();       // opt:step(), opt:zero_grad(), ...
const luaL_Reg* optimizer_metamethods();  // tostring(opt)
const Binding* scheduler_functions();     // optim.StepLR, ... optim.ReduceLROnPlateau
const Binding* scheduler_methods();       // scheduler:step(), scheduler:lr()

}  // namespace engine::lua
