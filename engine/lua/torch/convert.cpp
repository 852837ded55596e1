// Part of require 'torch'. Conversions and printing: x:item, x:totable, x:to, x:dtype, x:device,
// tostring(x), #x. Dimensions and index values are 1-based in Lua and converted here (LUA_API.md).
#include <cmath>
#include <sstream>

#include "engine/core/device.hpp"
#include "engine/core/format.hpp"
#include "engine/lua/torch/torch_tables.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

// Printing.

std::string format_number(double v, bool integral) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  if (integral) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4f", v);
  }
  return buf;
}

void format_values(std::ostringstream& out, const Tensor& t, int64_t depth, bool integral,
                   bool is_bool, int indent) {
  constexpr int64_t kEdge = 3;
  if (t.dim() == 0) {
    const double v = t.item<double>();
    out << (is_bool ? (v != 0 ? "true" : "false") : format_number(v, integral));
    return;
  }
  const int64_t n = t.size(0);
  const bool summarise = n > 2 * kEdge && t.numel() > 1000;
  out << "[";
  for (int64_t i = 0; i < n; ++i) {
    if (summarise && i == kEdge) {
      out << (t.dim() > 1 ? "...,\n" + std::string(indent + depth + 1, ' ') : "..., ");
      i = n - kEdge;
    }
    format_values(out, t[i], depth + 1, integral, is_bool, indent);
    if (i + 1 < n) out << (t.dim() > 1 ? ",\n" + std::string(indent + depth + 1, ' ') : ", ");
  }
  out << "]";
}

int m_dtype(lua_State* L) {
  return guarded(L, [&] {
    const std::string name = core::dtype_name(self(L, "dtype").scalar_type());
    lua_pushstring(L, name.c_str());
    return 1;
  });
}

int m_device(lua_State* L) {
  return guarded(L, [&] {
    const std::string name = self(L, "device").device().str();
    lua_pushstring(L, name.c_str());
    return 1;
  });
}

int m_item(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "item");
    if (x.numel() != 1) {
      throw ArgumentError("item: the tensor has " + std::to_string(x.numel()) +
                          " elements; only a one-element tensor converts to a number");
    }
    if (x.scalar_type() == torch::kBool) {
      lua_pushboolean(L, x.item<bool>());
    } else {
      lua_pushnumber(L, x.item<double>());
    }
    return 1;
  });
}

void push_table_of(lua_State* L, const Tensor& t, bool is_bool) {
  if (t.dim() == 0) {
    const double v = t.item<double>();
    if (is_bool) {
      lua_pushboolean(L, v != 0);
    } else {
      lua_pushnumber(L, v);
    }
    return;
  }
  lua_createtable(L, static_cast<int>(t.size(0)), 0);
  for (int64_t i = 0; i < t.size(0); ++i) {
    push_table_of(L, t[i], is_bool);
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

int m_totable(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "totable");
    push_table_of(L, x.detach().to(torch::kCPU).to(torch::kFloat64),
                  x.scalar_type() == torch::kBool);
    return 1;
  });
}

// x:to('cuda'), x:to('float64'), x:to{dtype = ..., device = ...}
int m_tensor_to(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "to");
    if (lua_type(L, 2) == LUA_TSTRING) {
      const std::string what = lua_tostring(L, 2);
      const bool is_device = what == "cpu" || what.rfind("cuda", 0) == 0;
      push_tensor(L, is_device ? x.to(core::parse_device(what)) : x.to(core::parse_dtype(what)));
      return 1;
    }
    Options o(L, 2, "to", {"dtype", "device"});
    Tensor out = x;
    if (o.has("device")) out = out.to(core::parse_device(o.string("device", "cpu")));
    if (o.has("dtype")) out = out.to(core::parse_dtype(o.string("dtype", "float32")));
    push_tensor(L, out);
    return 1;
  });
}

int m_tensor_tostring(lua_State* L) {
  return guarded(L, [&] {
    const std::string s = tensor_string(self(L, "tostring"));
    lua_pushlstring(L, s.data(), s.size());
    return 1;
  });
}

int m_tensor_len(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "#");
    lua_pushnumber(L, x.dim() == 0 ? 0 : static_cast<double>(x.size(0)));
    return 1;
  });
}

int m_eq_identity(lua_State* L) {
  lua_pushboolean(L, lua_rawequal(L, 1, 2));
  return 1;
}

const Binding kConvertMethods[] = {
    {"dtype", m_dtype},    {"device", m_device}, {"item", m_item},  {"totable", m_totable},
    {"tolist", m_totable}, {"to", m_tensor_to},  {nullptr, nullptr}};
const luaL_Reg kConvertMeta[] = {{"__tostring", m_tensor_tostring},
                                 {"__len", m_tensor_len},
                                 {"__eq", m_eq_identity},
                                 {nullptr, nullptr}};
const Binding kConvertFunctions[] = {{nullptr, nullptr}};

}  // namespace

std::string tensor_string(const Tensor& tensor) {
  if (!tensor.defined()) return "tensor(undefined)";
  auto t = tensor.detach().to(torch::kCPU);
  std::ostringstream out;
  out << "tensor(";
  const bool is_bool = t.scalar_type() == torch::kBool;
  const bool integral = !t.is_floating_point();
  format_values(out, t.to(torch::kFloat64), 0, integral, is_bool, 7);
  out << ", dtype=" << core::dtype_name(tensor.scalar_type());
  out << ", size=" << core::shape_string(tensor.sizes());
  if (!tensor.device().is_cpu()) out << ", device=" << tensor.device().str();
  if (tensor.requires_grad()) out << ", requires_grad=true";
  out << ")";
  return out.str();
}

TorchTables convert_tables() {
  return {kConvertMethods, kConvertMeta, kConvertFunctions};
}

}  // namespace engine::lua
