// Part of require 'torch'. Tensors made after another one, PyTorch's forms: x:new_zeros(shape),
// new_ones, new_full, new_empty, new_tensor (x's dtype and device unless opts say otherwise),
// x:view_as(y), reshape_as, expand_as, type_as; moving to a device (x:cpu(), x:cuda()); the
// legacy constructors torch.Tensor(sizes or table), FloatTensor, LongTensor... of Torch7 and
// PyTorch; torch.device(name) and the dtype names (torch.float32 is 'float32').
#include "engine/core/device.hpp"
#include "engine/lua/torch/torch_tables.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

// x's dtype and device, overridden by opts at `index` ({dtype = ..., device = ...}).
torch::TensorOptions like_options(lua_State* L, const Tensor& x, int index, const char* function) {
  Options o(L, index, function, {"dtype", "device", "requires_grad"});
  auto opts = x.options();
  if (o.has("dtype")) opts = opts.dtype(core::parse_dtype(o.string("dtype", "float32")));
  if (o.has("device")) opts = opts.device(core::parse_device(o.string("device", "cpu")));
  return opts.requires_grad(o.boolean("requires_grad", false));
}

template <int Kind>  // 0 zeros, 1 ones, 2 empty
int new_filled(lua_State* L) {
  static const char* const kNames[] = {"new_zeros", "new_ones", "new_empty"};
  const char* name = kNames[Kind];
  return guarded(L, [&] {
    auto& x = self(L, name);
    int next = 2;
    const auto shape = read_shape(L, 2, name, &next);
    const auto opts = like_options(L, x, next, name);
    push_tensor(L, Kind == 0   ? torch::zeros(shape, opts)
                   : Kind == 1 ? torch::ones(shape, opts)
                               : torch::empty(shape, opts));
    return 1;
  });
}

// x:new_full(shape, value[, opts])
int m_new_full(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "new_full");
    int next = 2;
    const auto shape = read_shape(L, 2, "new_full", &next);
    const double value = check_number(L, next, "new_full");
    push_tensor(L, torch::full(shape, value, like_options(L, x, next + 1, "new_full")));
    return 1;
  });
}

// x:new_tensor(table or tensor[, opts]): a new tensor of the values, in x's dtype and device.
int m_new_tensor(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "new_tensor");
    const auto opts = like_options(L, x, 3, "new_tensor");
    Tensor values;
    if (auto* t = test_tensor(L, 2)) {
      values = t->detach().clone();
    } else if (lua_type(L, 2) == LUA_TNUMBER) {
      values = torch::tensor(lua_tonumber(L, 2), torch::kFloat64);
    } else {
      values = torch::tensor(number_list(L, 2, "new_tensor"), torch::kFloat64);
    }
    push_tensor(L, values.to(opts.dtype().toScalarType())
                       .to(opts.device())
                       .set_requires_grad(opts.requires_grad()));
    return 1;
  });
}

// x:view_as(y) and the like: a tensor shaped (or typed) after y.
using AsMethod = Tensor (Tensor::*)(const Tensor&) const;
template <AsMethod Method>
int as_other(lua_State* L, const char* name) {
  return guarded(L, [&] {
    push_tensor(L, (self(L, name).*Method)(check_tensor(L, 2, name)));
    return 1;
  });
}
int m_view_as(lua_State* L) {
  return as_other<&Tensor::view_as>(L, "view_as");
}
int m_reshape_as(lua_State* L) {
  return as_other<&Tensor::reshape_as>(L, "reshape_as");
}
int m_expand_as(lua_State* L) {
  return as_other<&Tensor::expand_as>(L, "expand_as");
}
int m_type_as(lua_State* L) {
  return as_other<&Tensor::type_as>(L, "type_as");
}

int m_cpu(lua_State* L) {
  return guarded(L, [&] {
    push_tensor(L, self(L, "cpu").to(torch::kCPU));
    return 1;
  });
}

// x:cuda([index]): the GPU of that index (0 by default); an error naming the devices there are
// where none is.
int m_cuda(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "cuda");
    const std::string device =
        lua_isnoneornil(L, 2) ? "cuda" : "cuda:" + std::to_string(check_integer(L, 2, "cuda"));
    push_tensor(L, x.to(core::parse_device(device)));
    return 1;
  });
}

// x:stride(), x:stride(d): the steps in elements between neighbours of each dimension.
int m_stride(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "stride");
    if (lua_isnoneornil(L, 2)) {
      push_shape(L, x.strides());
    } else {
      lua_pushnumber(L, static_cast<double>(x.stride(check_dim(L, 2, x.dim(), "stride"))));
    }
    return 1;
  });
}

// torch.Tensor(2, 3) / torch.Tensor{...}: Torch7's and PyTorch's legacy constructors, a zero
// tensor of that shape (PyTorch leaves its memory uninitialised) or one of the values.
template <torch::ScalarType Type>
int legacy_constructor(lua_State* L) {
  const std::string name = "torch." + std::string(c10::toString(Type)) + "Tensor";
  return guarded(L, [&] {
    if (lua_istable(L, 1) && !test_tensor(L, 1)) {
      auto values = torch::tensor(number_list(L, 1, name), torch::kFloat64);
      if (lua_objlen(L, 1) > 0) {
        lua_rawgeti(L, 1, 1);
        const bool nested = lua_istable(L, -1);
        lua_pop(L, 1);
        if (nested)
          throw ArgumentError(name + "{...}: a flat list of numbers (torch.tensor " +
                              "takes nested tables)");
      }
      push_tensor(L, values.to(Type));
      return 1;
    }
    int next = 1;
    push_tensor(L, torch::zeros(read_shape(L, 1, name.c_str(), &next), torch::dtype(Type)));
    return 1;
  });
}

// torch.device('cuda:0') -> 'cuda:0', checked: devices are names in the engine.
int t_device(lua_State* L) {
  return guarded(L, [&] {
    const std::string name = check_string(L, 1, "torch.device");
    core::parse_device(name);
    lua_pushstring(L, name.c_str());
    return 1;
  });
}

const Binding kLikeMethods[] = {
    {"new_zeros", new_filled<0>},
    {"new_ones", new_filled<1>},
    {"new_empty", new_filled<2>},
    {"new_full", m_new_full},
    {"new_tensor", m_new_tensor},
    {"view_as", m_view_as},
    {"reshape_as", m_reshape_as},
    {"expand_as", m_expand_as},
    {"type_as", m_type_as},
    {"cpu", m_cpu},
    {"cuda", m_cuda},
    {"stride", m_stride, "", "a list of strides, one per dimension; x:stride(d) with d 1-based"},
    {nullptr, nullptr}};
const luaL_Reg kLikeMeta[] = {{nullptr, nullptr}};
const Binding kLikeFunctions[] = {
    {"Tensor", legacy_constructor<torch::kFloat32>, "torch.Tensor",
     "torch.Tensor(2, 3) is a float32 tensor of zeros (PyTorch leaves its memory "
     "uninitialised), torch.Tensor{1, 2} one of the values"},
    {"FloatTensor", legacy_constructor<torch::kFloat32>},
    {"DoubleTensor", legacy_constructor<torch::kFloat64>},
    {"LongTensor", legacy_constructor<torch::kInt64>},
    {"IntTensor", legacy_constructor<torch::kInt32>},
    {"ByteTensor", legacy_constructor<torch::kUInt8>},
    {"BoolTensor", legacy_constructor<torch::kBool>},
    {"device", t_device, "", "a device is its name: torch.device('cuda') is 'cuda'"},
    {nullptr, nullptr}};

}  // namespace

TorchTables like_tables() {
  return {kLikeMethods, kLikeMeta, kLikeFunctions};
}

// The dtype names as torch's fields (torch.float32 is 'float32'), PyTorch's aliases too.
void add_dtype_names(lua_State* L, int library) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"float32", "float32"}, {"float", "float32"}, {"float64", "float64"},   {"double", "float64"},
      {"float16", "float16"}, {"half", "float16"},  {"bfloat16", "bfloat16"}, {"int64", "int64"},
      {"long", "int64"},      {"int32", "int32"},   {"int", "int32"},         {"int16", "int16"},
      {"short", "int16"},     {"int8", "int8"},     {"uint8", "uint8"},       {"bool", "bool"}};
  for (const auto& [name, dtype] : kNames) {
    lua_pushstring(L, dtype);
    lua_setfield(L, library, name);
  }
}

}  // namespace engine::lua
