// require 'torch': the tensor type and the torch library, assembled from the parts in this
// folder (construct, index, math, reduce, autograd, convert, linalg), each of which lists its
// own methods, metamethods and torch.* functions.
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/runtime/tensor_memory.hpp"
#include "engine/lua/torch/torch_tables.hpp"

namespace engine::lua {
namespace {

// Functions of the torch table that mirror a method taking the tensor first.
const char* kMirrored[] = {"add",         "sub",
                           "mul",         "div",
                           "pow",         "eq",
                           "ne",          "lt",
                           "le",          "gt",
                           "ge",          "maximum",
                           "minimum",     "matmul",
                           "mm",          "dot",
                           "abs",         "exp",
                           "log",         "sqrt",
                           "relu",        "sigmoid",
                           "tanh",        "sum",
                           "mean",        "max",
                           "min",         "argmax",
                           "argmin",      "softmax",
                           "log_softmax", "flatten",
                           "reshape",     "transpose",
                           "squeeze",     "unsqueeze",
                           "clone",       "t",
                           "chunk",       "narrow",
                           "select",      "permute",
                           "std",         "var",
                           "prod",        "logsumexp",
                           "all",         "any",
                           "equal",       "index_select",
                           "gather",      "scatter",
                           "masked_fill", "masked_select",
                           "split",       "sort",
                           "topk",        "cumsum",
                           "clamp",       "norm",
                           "bmm",         "outer"};

}  // namespace

int open_torch(lua_State* L) {
  const TorchTables parts[] = {construct_tables(), index_tables(),    math_tables(),
                               reduce_tables(),    autograd_tables(), convert_tables()};
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
  for (const char* name : kMirrored) {
    lua_getfield(L, -2, name);
    lua_setfield(L, -2, name);
  }
  lua_remove(L, -2);  // methods
  lua_remove(L, -2);  // metatable
  return 1;
}

}  // namespace engine::lua
