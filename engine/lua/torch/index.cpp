// Part of require 'torch'. Indexing, views and shape: x[i], x[{a, b}] = v, size, view, reshape,
// permute, narrow, gather, scatter, masked_fill, split. Dimensions and index values are 1-based in
// Lua and converted here (LUA_API.md).
#include "engine/lua/torch/torch_tables.hpp"

#include "engine/core/format.hpp"
#include "engine/core/numbers.hpp"
#include "engine/lua/surface/missing_names.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

using torch::indexing::Slice;
using torch::indexing::TensorIndex;

// Entry `what` of an index table, which must be a whole number.
int64_t index_value(lua_State* L, int index, const std::string& what) {
  const double v = lua_tonumber(L, index);
  const auto whole = core::exact_int64(v);
  if (!whole) throw ArgumentError(what + " must be an integer, got " + core::number_string(v));
  return *whole;
}

int64_t element_index(int64_t user_index, int64_t size, int64_t dim) {
  if (user_index >= 1 && user_index <= size) return user_index - 1;
  if (user_index <= -1 && user_index >= -size) return user_index + size;
  throw ArgumentError("index " + std::to_string(user_index) + " is out of range for dimension " +
                      std::to_string(dim + 1) + " of size " + std::to_string(size) +
                      " (indices are 1-based; negative ones count from the end)");
}

// x[i], x[{i, j}], x[{{1, 3}, {}}]: numbers select, {a, b} is an inclusive 1-based range, {}
// keeps the whole dimension.
std::vector<TensorIndex> read_index(lua_State* L, int index, const Tensor& t) {
  std::vector<TensorIndex> out;
  // Room for every entry up front: a growing vector would move them, and TensorIndex's implicit
  // move copies a bool member its integer constructor leaves uninitialised (libtorch 1.13's
  // ATen/TensorIndexing.h), which UBSan reports.
  out.reserve(static_cast<size_t>(std::max<int64_t>(t.dim(), 1)));
  if (lua_type(L, index) == LUA_TNUMBER) {
    if (t.dim() == 0) throw ArgumentError("cannot index a 0-dim tensor");
    out.emplace_back(element_index(check_integer(L, index, "index"), t.size(0), 0));
    return out;
  }
  if (auto* mask = test_tensor(L, index)) {
    if (mask->scalar_type() == torch::kBool) {
      out.emplace_back(*mask);
    } else {
      out.emplace_back(mask->to(torch::kInt64) - 1);  // index tensors are 1-based in Lua
    }
    return out;
  }
  if (!lua_istable(L, index))
    throw ArgumentError("tensor index must be a number, a table or a tensor, got " +
                        type_name(L, index));
  const size_t n = lua_objlen(L, index);
  if (static_cast<int64_t>(n) > t.dim()) {
    throw ArgumentError("too many indices (" + std::to_string(n) + ") for a tensor with " +
                        std::to_string(t.dim()) + " dimension(s)");
  }
  int64_t dim = 0;  // dimension of the original tensor this entry refers to
  for (size_t i = 1; i <= n; ++i, ++dim) {
    lua_rawgeti(L, index, static_cast<int>(i));
    const int type = lua_type(L, -1);
    if (type == LUA_TNUMBER) {
      const int64_t v = index_value(L, -1, "index entry " + std::to_string(i));
      lua_pop(L, 1);
      out.emplace_back(element_index(v, t.size(dim), dim));
    } else if (type == LUA_TTABLE) {
      const size_t m = lua_objlen(L, -1);
      const int64_t size = t.size(dim);
      int64_t a = 1, b = size;
      if (m >= 1) {
        lua_rawgeti(L, -1, 1);
        a = index_value(L, -1, "the start of range " + std::to_string(i));
        lua_pop(L, 1);
      }
      if (m >= 2) {
        lua_rawgeti(L, -1, 2);
        b = index_value(L, -1, "the end of range " + std::to_string(i));
        lua_pop(L, 1);
      } else if (m == 1)
        b = a;
      lua_pop(L, 1);
      const int64_t start = element_index(a, size, dim);
      const int64_t stop = element_index(b, size, dim) + 1;
      if (stop < start) {
        throw ArgumentError("empty range {" + std::to_string(a) + ", " + std::to_string(b) +
                            "} for dimension " + std::to_string(dim + 1));
      }
      out.emplace_back(Slice(start, stop));
    } else {
      const std::string got = type_name(L, -1);
      lua_pop(L, 1);
      throw ArgumentError("index entry " + std::to_string(i) +
                          " must be a number or a range table, got " + got);
    }
  }
  return out;
}

// x.grad = g (or nil), x.data = y: PyTorch's assignable attributes.
void set_tensor_field(lua_State* L, Tensor& t, const std::string& key) {
  if (key == "grad") {
    if (lua_isnil(L, 3)) {
      t.mutable_grad() = Tensor();
      return;
    }
    const auto& g = check_tensor(L, 3, "x.grad =");
    if (!g.sizes().equals(t.sizes())) {
      throw ArgumentError("x.grad = g: g's shape " + core::shape_string(g.sizes()) +
                          " is not the tensor's " + core::shape_string(t.sizes()));
    }
    t.mutable_grad() = g;
    return;
  }
  if (key == "data") {  // PyTorch's p.data = t: the values replaced, the tensor (and its
    t.set_data(check_tensor(L, 3, "x.data ="));  // place in modules and optimizers) kept
    return;
  }
  throw ArgumentError("cannot set field '" + key +
                      "' of a Tensor (its settable fields are grad and data)");
}

int tensor_newindex(lua_State* L) {
  return guarded(L, [&] {
    auto& t = check_tensor(L, 1, "index assignment");
    if (lua_type(L, 2) == LUA_TSTRING) {
      set_tensor_field(L, t, lua_tostring(L, 2));
      return 0;
    }
    auto idx = read_index(L, 2, t);
    torch::NoGradGuard no_grad;
    if (auto* v = test_tensor(L, 3)) {
      t.index_put_(idx, *v);
    } else {
      t.index_put_(idx, check_number(L, 3, "index assignment"));
    }
    return 0;
  });
}

int m_size(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "size");
    if (lua_isnoneornil(L, 2)) {
      push_shape(L, x.sizes());
    } else {
      lua_pushnumber(L, static_cast<double>(x.size(check_dim(L, 2, x.dim(), "size"))));
    }
    return 1;
  });
}

int m_dim(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, static_cast<double>(self(L, "dim").dim()));
    return 1;
  });
}

int m_numel(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, static_cast<double>(self(L, "numel").numel()));
    return 1;
  });
}

int m_view(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "view");
    push_tensor(L, x.view(read_shape(L, 2, "view", nullptr)));
    return 1;
  });
}

int m_reshape(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "reshape");
    push_tensor(L, x.reshape(read_shape(L, 2, "reshape", nullptr)));
    return 1;
  });
}

int m_expand(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "expand");
    push_tensor(L, x.expand(read_shape(L, 2, "expand", nullptr)));
    return 1;
  });
}

int m_flatten(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "flatten");
    const int64_t start = lua_isnoneornil(L, 2) ? 0 : check_dim(L, 2, x.dim(), "flatten");
    const int64_t end = lua_isnoneornil(L, 3) ? -1 : check_dim(L, 3, x.dim(), "flatten");
    push_tensor(L, x.flatten(start, end));
    return 1;
  });
}

int m_permute(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "permute");
    auto dims = read_shape(L, 2, "permute", nullptr);
    for (auto& d : dims) d = to_dim(d, x.dim(), "permute");
    push_tensor(L, x.permute(dims));
    return 1;
  });
}

int m_transpose(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "transpose");
    push_tensor(L, x.transpose(check_dim(L, 2, x.dim(), "transpose"),
                               check_dim(L, 3, x.dim(), "transpose")));
    return 1;
  });
}

int m_unsqueeze(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "unsqueeze");
    push_tensor(L, x.unsqueeze(check_dim(L, 2, x.dim() + 1, "unsqueeze")));
    return 1;
  });
}

int m_squeeze(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "squeeze");
    push_tensor(
        L, lua_isnoneornil(L, 2) ? x.squeeze() : x.squeeze(check_dim(L, 2, x.dim(), "squeeze")));
    return 1;
  });
}

int m_narrow(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "narrow");
    const int64_t dim = check_dim(L, 2, x.dim(), "narrow");
    const int64_t user_start = check_integer(L, 3, "narrow");
    const int64_t start = element_index(user_start, x.size(dim), dim);
    const int64_t length = check_integer(L, 4, "narrow");
    if (length < 0 || start + length > x.size(dim)) {  // said in the script's 1-based terms
      throw ArgumentError("narrow: " + std::to_string(length) + " elements from " +
                          std::to_string(user_start) + " do not fit in dimension " +
                          std::to_string(dim + 1) + " of size " + std::to_string(x.size(dim)) +
                          " (tensor of shape " + core::shape_string(x.sizes()) + ")");
    }
    push_tensor(L, x.narrow(dim, start, length));
    return 1;
  });
}

int m_select(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "select");
    const int64_t dim = check_dim(L, 2, x.dim(), "select");
    push_tensor(L, x.select(dim, element_index(check_integer(L, 3, "select"), x.size(dim), dim)));
    return 1;
  });
}

int m_chunk(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "chunk");
    const int64_t n = check_integer(L, 2, "chunk");
    const int64_t dim = lua_isnoneornil(L, 3) ? 0 : check_dim(L, 3, x.dim(), "chunk");
    auto parts = x.chunk(n, dim);
    for (auto& p : parts) push_tensor(L, p);
    return static_cast<int>(parts.size());
  });
}

int m_index_select(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "index_select");
    const int64_t dim = check_dim(L, 2, x.dim(), "index_select");
    auto index = nn::zero_based(check_tensor(L, 3, "index_select"), x.size(dim), "index_select");
    push_tensor(L, x.index_select(dim, index));
    return 1;
  });
}

int m_gather(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "gather");
    const int64_t dim = check_dim(L, 2, x.dim(), "gather");
    auto index = nn::zero_based(check_tensor(L, 3, "gather"), x.size(dim), "gather");
    push_tensor(L, x.gather(dim, index));
    return 1;
  });
}

// x:scatter(dim, index, src) with src a tensor or a number; x:scatter_ changes x.
int scatter(lua_State* L, bool in_place) {
  const char* name = in_place ? "scatter_" : "scatter";
  return guarded(L, [&] {
    auto& x = self(L, name);
    const int64_t dim = check_dim(L, 2, x.dim(), name);
    auto index = nn::zero_based(check_tensor(L, 3, name), x.size(dim), name);
    if (auto* src = test_tensor(L, 4)) {
      return push_result(L, in_place,
                         in_place ? x.scatter_(dim, index, *src) : x.scatter(dim, index, *src));
    }
    const double v = check_number(L, 4, name);
    return push_result(L, in_place,
                       in_place ? x.scatter_(dim, index, v) : x.scatter(dim, index, v));
  });
}
int m_scatter(lua_State* L) {
  return scatter(L, false);
}
int m_scatter_(lua_State* L) {
  return scatter(L, true);
}

int masked_fill(lua_State* L, bool in_place) {
  const char* name = in_place ? "masked_fill_" : "masked_fill";
  return guarded(L, [&] {
    auto& x = self(L, name);
    auto& mask = check_tensor(L, 2, name);
    if (auto* v = test_tensor(L, 3)) {
      return push_result(L, in_place,
                         in_place ? x.masked_fill_(mask, *v) : x.masked_fill(mask, *v));
    }
    const double v = check_number(L, 3, name);
    return push_result(L, in_place, in_place ? x.masked_fill_(mask, v) : x.masked_fill(mask, v));
  });
}
int m_masked_fill(lua_State* L) {
  return masked_fill(L, false);
}
int m_masked_fill_(lua_State* L) {
  return masked_fill(L, true);
}

int m_masked_select(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "masked_select");
    push_tensor(L, x.masked_select(check_tensor(L, 2, "masked_select")));
    return 1;
  });
}

// x:split(size[, dim]) or x:split({sizes...}[, dim]): several return values.
int m_split(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "split");
    const int64_t dim = lua_isnoneornil(L, 3) ? 0 : check_dim(L, 3, x.dim(), "split");
    std::vector<Tensor> parts;
    if (lua_istable(L, 2)) {
      const auto sizes = integer_list(L, 2, "split: sizes");
      parts = x.split_with_sizes(sizes, dim);
    } else {
      parts = x.split(check_integer(L, 2, "split"), dim);
    }
    for (auto& p : parts) push_tensor(L, p);
    return static_cast<int>(parts.size());
  });
}

int m_repeat(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "repeat");
    push_tensor(L, x.repeat(read_shape(L, 2, "repeat", nullptr)));
    return 1;
  });
}

// x:unflatten(dim, sizes)
int m_unflatten(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "unflatten");
    const int64_t dim = check_dim(L, 2, x.dim(), "unflatten");
    push_tensor(L, x.unflatten(dim, read_shape(L, 3, "unflatten", nullptr)));
    return 1;
  });
}

const Binding kIndexMethods[] = {{"scatter_", m_scatter_},
                                 {"masked_fill_", m_masked_fill_},
                                 {"size", m_size},
                                 {"dim", m_dim},
                                 {"numel", m_numel},
                                 {"view", m_view},
                                 {"reshape", m_reshape},
                                 {"expand", m_expand},
                                 {"flatten", m_flatten},
                                 {"permute", m_permute},
                                 {"transpose", m_transpose},
                                 {"unsqueeze", m_unsqueeze},
                                 {"squeeze", m_squeeze},
                                 {"narrow", m_narrow},
                                 {"select", m_select},
                                 {"chunk", m_chunk},
                                 {"index_select", m_index_select},
                                 {"gather", m_gather},
                                 {"scatter", m_scatter},
                                 {"masked_fill", m_masked_fill},
                                 {"masked_select", m_masked_select},
                                 {"split", m_split},
                                 {"repeat", m_repeat},
                                 {"repeat_tensor", m_repeat},
                                 {"unflatten", m_unflatten},
                                 {nullptr, nullptr}};
const luaL_Reg kIndexMeta[] = {{"__newindex", tensor_newindex}, {nullptr, nullptr}};

// PyTorch's tensor attributes that are values, not methods.
const char* const kTensorFields[] = {"grad", "data",    "shape",  "T",      "mT",
                                     "ndim", "is_cuda", "is_xpu", "is_leaf"};

// Pushes x.<key> for one of kTensorFields; false for another key.
bool push_tensor_field(lua_State* L, const Tensor& t, const std::string& key) {
  if (key == "grad") {
    if (t.grad().defined()) {
      push_tensor(L, t.grad());
    } else {
      lua_pushnil(L);  // PyTorch's None: no gradient yet
    }
  } else if (key == "data") {
    push_tensor(L, t.variable_data());  // the values, outside autograd (PyTorch's .data)
  } else if (key == "shape") {
    push_shape(L, t.sizes());
  } else if (key == "T") {  // every dimension reversed
    std::vector<int64_t> order(static_cast<size_t>(t.dim()));
    for (int64_t i = 0; i < t.dim(); ++i) order[static_cast<size_t>(i)] = t.dim() - 1 - i;
    push_tensor(L, t.permute(order));
  } else if (key == "mT") {
    push_tensor(L, t.transpose(-2, -1));
  } else if (key == "ndim") {
    lua_pushnumber(L, static_cast<double>(t.dim()));
  } else if (key == "is_cuda") {
    lua_pushboolean(L, t.is_cuda());
  } else if (key == "is_xpu") {
    lua_pushboolean(L, t.is_xpu());
  } else if (key == "is_leaf") {
    lua_pushboolean(L, t.is_leaf());
  } else {
    return false;
  }
  return true;
}
const Binding kIndexFunctions[] = {{nullptr, nullptr}};

}  // namespace

int tensor_index(lua_State* L) {
  // Methods first: x:sum(), then PyTorch's attributes (x.grad, x.shape), then positional
  // indexing. Any other name is an error naming it.
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
    return guarded(L, [&] {
      auto& t = check_tensor(L, 1, "index");
      const std::string key = lua_tostring(L, 2);
      if (push_tensor_field(L, t, key)) return 1;
      auto known = table_keys(L, lua_upvalueindex(1));
      for (const char* field : kTensorFields) known.emplace_back(field);
      throw ArgumentError(missing_name_message("Tensor", key, known, "x:"));
    });
  }
  return guarded(L, [&] {
    auto& t = check_tensor(L, 1, "index");
    push_tensor(L, t.index(read_index(L, 2, t)));
    return 1;
  });
}

std::vector<std::string> tensor_field_names() {
  return {std::begin(kTensorFields), std::end(kTensorFields)};
}

int push_result(lua_State* L, bool in_place, const torch::Tensor& result) {
  if (in_place) {
    lua_settop(L, 1);
  } else {
    push_tensor(L, result);
  }
  return 1;
}

TorchTables index_tables() {
  return {kIndexMethods, kIndexMeta, kIndexFunctions};
}

}  // namespace engine::lua
