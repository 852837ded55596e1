// require 'torch': the tensor type and the torch library, assembled from the parts in this
// folder (construct, index, math, reduce, autograd, convert, like, rearrange, linalg), each of
// which lists its
// own methods, metamethods and torch.* functions.
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/runtime/tensor_memory.hpp"
#include "engine/lua/surface/missing_names.hpp"
#include "engine/lua/torch/torch_tables.hpp"

namespace engine::lua {

int open_torch(lua_State* L) {
  const TorchTables parts[] = {construct_tables(), index_tables(),    math_tables(),
                               reduce_tables(),    autograd_tables(), convert_tables(),
                               like_tables(),      rearrange_tables()};
  define_type(L, TensorBox::kTypeName, nullptr, nullptr, gc_tensor, tensor_index);
  for (const TorchTables& part : parts)
    extend_type(L, TensorBox::kTypeName, part.methods, part.meta);
  push_metatable(L, TensorBox::kTypeName);
  lua_getfield(L, -1, "__methods");
  lua_newtable(L);  // the torch library
  for (const TorchTables& part : parts) set_bindings(L, part.functions);
  lua_newtable(L);  // torch.linalg
  set_bindings(L, linalg_functions());
  lua_setfield(L, -2, "linalg");
  lua_newtable(L);  // torch.autograd
  set_bindings(L, autograd_functions());
  lua_setfield(L, -2, "autograd");
  // torch.cos(x) is x:cos(): every method PyTorch also has as a torch function is one here too
  for (const auto& name : table_keys(L, -2)) {
    if (pytorch_name_of("torch", name).empty()) continue;
    raw_get(L, -1, name.c_str());
    const bool taken = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (taken) continue;
    lua_getfield(L, -2, name.c_str());
    lua_setfield(L, -2, name.c_str());
  }
  add_dtype_names(L, lua_gettop(L));  // torch.float32 is 'float32' (and not x:float)
  lua_remove(L, -2);                  // methods
  lua_remove(L, -2);                  // metatable
  return 1;
}

}  // namespace engine::lua
