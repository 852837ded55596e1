// engine.surface: what the coverage page (docs/lua-api/coverage.md, written by
// tests/surface/coverage.lua) reads of the Lua surface: for a name a library holds, the PyTorch
// name it stands for and what its binding says differs; the PyTorch names left out on purpose
// with their reasons; a tensor's attributes.
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/surface/missing_names.hpp"
#include "engine/lua/surface/not_offered.hpp"
#include "engine/lua/torch/torch_tables.hpp"

namespace engine::lua {
namespace {

// engine.surface.describe(label, name, value) -> pytorch name ('' when PyTorch has none), note
int s_describe(lua_State* L) {
  return guarded(L, [&] {
    const std::string label = check_string(L, 1, "engine.surface.describe");
    const std::string name = check_string(L, 2, "engine.surface.describe");
    const Binding* binding =
        lua_iscfunction(L, 3) ? find_binding(lua_tocfunction(L, 3), name) : nullptr;
    std::string pytorch =
        binding && *binding->pytorch ? binding->pytorch : pytorch_name_of(label, name);
    lua_pushstring(L, pytorch.c_str());
    lua_pushstring(L, binding ? binding->note : "");
    return 2;
  });
}

// engine.surface.not_offered() -> {{name = ..., reason = ...}, ...}
int s_not_offered(lua_State* L) {
  return guarded(L, [&] {
    const auto& names = not_offered();
    lua_createtable(L, static_cast<int>(names.size()), 0);
    int i = 1;
    for (const auto& [name, reason] : names) {
      lua_createtable(L, 0, 2);
      lua_pushstring(L, name.c_str());
      lua_setfield(L, -2, "name");
      lua_pushstring(L, reason.c_str());
      lua_setfield(L, -2, "reason");
      lua_rawseti(L, -2, i++);
    }
    return 1;
  });
}

// engine.surface.tensor_fields() -> the attributes a tensor answers besides its methods
int s_tensor_fields(lua_State* L) {
  return guarded(L, [&] {
    const auto fields = tensor_field_names();
    lua_createtable(L, static_cast<int>(fields.size()), 0);
    for (size_t i = 0; i < fields.size(); ++i) {
      lua_pushstring(L, fields[i].c_str());
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    return 1;
  });
}

const Binding kSurface[] = {{"describe", s_describe},
                            {"not_offered", s_not_offered},
                            {"tensor_fields", s_tensor_fields},
                            {nullptr, nullptr}};

}  // namespace

void add_surface(lua_State* L, int library) {
  add_bindings_table(L, library, "surface", {kSurface});
}

}  // namespace engine::lua
