// A search space as a Lua value: what search.log(1e-3, 1) and friends return, and what the
// training script's reader finds in hparams (train_script_reader.cpp).
#pragma once

extern "C" {
#include <lua.h>
}

#include "engine/search/space.hpp"

namespace engine::lua {

struct SpaceBox {
  static constexpr char kTypeName[] = "SearchSpace";  // one address in every file: the tag
  search::Space space;
};

// The space at index, or nullptr when the value is something else.
const search::Space* test_space(lua_State* L, int index);

}  // namespace engine::lua
