// require 'torch': tensors, their methods and metamethods, and the torch.* functions.
// Dimensions and index values are 1-based in Lua and converted here (LUA_API.md).
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <sstream>

#include "engine/core/device.hpp"
#include "engine/core/format.hpp"
#include "engine/core/seed.hpp"
#include "engine/lua/libraries.hpp"
#include "engine/lua/tensor_memory.hpp"
#include "engine/lua/tensor_value.hpp"

namespace engine::lua {

// ---- shared helpers ---------------------------------------------------------------------------

void push_tensor(lua_State* L, torch::Tensor tensor) {
  track_pushed_tensor(L, push_new<TensorBox>(L, TensorBox{std::move(tensor)}).tensor);
}

torch::Tensor* test_tensor(lua_State* L, int index) {
  auto* box = test<TensorBox>(L, index);
  return box ? &box->tensor : nullptr;
}

torch::Tensor& check_tensor(lua_State* L, int index, const char* function) {
  return check<TensorBox>(L, index, function).tensor;
}

// A Lua number becomes a "wrapped number", the 0-dim tensor Python passes for a literal, so
// type promotion treats it as a scalar: integral values act as Python ints (int tensor + 1
// stays int64), others as Python floats (int tensor * 1.5 is float32, not float64).
torch::Tensor wrapped_number(const at::Scalar& value) {
  auto t = c10::scalar_to_tensor(value);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

c10::MaybeOwned<torch::Tensor> tensor_or_scalar(lua_State* L, int index, const char* function) {
  using Owned = c10::MaybeOwned<torch::Tensor>;
  if (auto* t = test_tensor(L, index)) return Owned::borrowed(*t);
  if (lua_type(L, index) == LUA_TNUMBER) {
    const double v = lua_tonumber(L, index);
    const bool integral = std::floor(v) == v && std::fabs(v) < 9.0e15;
    return Owned::owned(integral ? wrapped_number(static_cast<int64_t>(v)) : wrapped_number(v));
  }
  if (lua_type(L, index) == LUA_TBOOLEAN) {
    return Owned::owned(wrapped_number(lua_toboolean(L, index) != 0));
  }
  throw ArgumentError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                      "' (Tensor or number expected, got " + found_instead<TensorBox>(L, index) +
                      ")");
}

int64_t to_dim(int64_t user_dim, int64_t rank, const char* function) {
  const int64_t r = std::max<int64_t>(rank, 1);  // a 0-dim tensor accepts dim 1 / -1, like PyTorch
  if (user_dim >= 1 && user_dim <= r) return user_dim - 1;
  if (user_dim <= -1 && user_dim >= -r) return user_dim;
  throw ArgumentError(std::string(function) + ": dimension " + std::to_string(user_dim) +
                      " is out of range for a tensor with " + std::to_string(rank) +
                      " dimension(s) (expected 1.." + std::to_string(r) + " or -" +
                      std::to_string(r) + "..-1)");
}

int64_t check_dim(lua_State* L, int index, int64_t rank, const char* function) {
  return to_dim(check_integer(L, index, function), rank, function);
}

std::vector<int64_t> read_shape(lua_State* L, int first, const char* function, int* next) {
  std::vector<int64_t> shape;
  int i = first;
  if (lua_istable(L, i) && !test_tensor(L, i) && lua_objlen(L, i) > 0) {
    for (double v : number_list(L, i, std::string(function) + ": shape")) {
      shape.push_back(static_cast<int64_t>(v));
    }
    ++i;
  } else {
    for (; lua_type(L, i) == LUA_TNUMBER; ++i) shape.push_back(check_integer(L, i, function));
  }
  if (next) *next = i;
  return shape;
}

void push_shape(lua_State* L, c10::IntArrayRef shape) {
  lua_createtable(L, static_cast<int>(shape.size()), 0);
  for (size_t i = 0; i < shape.size(); ++i) {
    lua_pushnumber(L, static_cast<double>(shape[i]));
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

std::vector<torch::Tensor> tensor_list(lua_State* L, int index, const char* function) {
  if (!lua_istable(L, index) || test_tensor(L, index)) {
    throw ArgumentError(std::string(function) + ": expected a list of tensors, got " +
                        type_name(L, index));
  }
  std::vector<torch::Tensor> out;
  const size_t n = lua_objlen(L, index);
  for (size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, static_cast<int>(i));
    auto* t = test_tensor(L, -1);
    if (!t) {
      const std::string got = found_instead<TensorBox>(L, -1);
      lua_pop(L, 1);
      throw ArgumentError(std::string(function) + ": element " + std::to_string(i) +
                          " (Tensor expected, got " + got + ")");
    }
    out.push_back(*t);
    lua_pop(L, 1);
  }
  if (out.empty())
    throw ArgumentError(std::string(function) + ": expected a non-empty list of tensors");
  return out;
}

// Index tensors are 1-based in Lua: these convert them, checking the range in Lua's terms.
torch::Tensor zero_based_index(const torch::Tensor& index, int64_t size, const char* function) {
  if (index.scalar_type() != torch::kInt64 && index.scalar_type() != torch::kInt32) {
    throw ArgumentError(std::string(function) + ": index must be an integer tensor, got " +
                        core::dtype_name(index.scalar_type()));
  }
  if (index.numel() > 0) {
    const int64_t lo = index.min().item<int64_t>(), hi = index.max().item<int64_t>();
    if (lo < 1 || hi > size) {
      throw ArgumentError(std::string(function) + ": index " + std::to_string(lo < 1 ? lo : hi) +
                          " is out of range 1.." + std::to_string(size));
    }
  }
  return index.to(torch::kInt64) - 1;
}

torch::Tensor tensor_option(lua_State* L, int index, const char* key, const char* function) {
  if (!lua_istable(L, index)) return torch::Tensor();
  lua_pushstring(L, key);
  lua_rawget(L, absolute_index(L, index));
  torch::Tensor out;
  if (auto* t = test_tensor(L, -1)) {
    out = *t;
  } else if (!lua_isnil(L, -1)) {
    const std::string got = type_name(L, -1);
    lua_pop(L, 1);
    throw ArgumentError(std::string(function) + ": option '" + key + "' must be a tensor, got " +
                        got);
  }
  lua_pop(L, 1);
  return out;
}

torch::Tensor zero_based_targets(const torch::Tensor& target) {
  return target.scalar_type() == torch::kInt64 ? target - 1 : target;
}

namespace {

using torch::Tensor;

// ---- construction -----------------------------------------------------------------------------

torch::TensorOptions creation_options(lua_State* L, int index, const char* function,
                                      torch::ScalarType fallback = torch::kFloat32) {
  Options o(L, index, function, {"dtype", "device", "requires_grad"});
  return torch::TensorOptions()
      .dtype(core::parse_dtype(o.string("dtype", core::dtype_name(fallback))))
      .device(core::parse_device(o.string("device", "cpu")))
      .requires_grad(o.boolean("requires_grad", false));
}

// Reads nested tables of numbers (or booleans) into a flat list, checking that every row of a
// level has the same length.
void flatten_nested(lua_State* L, int index, size_t depth, std::vector<int64_t>& shape,
                    std::vector<double>& values, bool& saw_bool) {
  index = absolute_index(L, index);
  const size_t n = lua_objlen(L, index);
  if (depth == shape.size()) {
    shape.push_back(static_cast<int64_t>(n));
  } else if (shape[depth] != static_cast<int64_t>(n)) {
    throw ArgumentError("torch.tensor: ragged nested table (a row at depth " +
                        std::to_string(depth + 1) + " has " + std::to_string(n) +
                        " elements, expected " + std::to_string(shape[depth]) + ")");
  }
  for (size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, static_cast<int>(i));
    const int t = lua_type(L, -1);
    if (t == LUA_TNUMBER) {
      values.push_back(lua_tonumber(L, -1));
    } else if (t == LUA_TBOOLEAN) {
      saw_bool = true;
      values.push_back(lua_toboolean(L, -1) ? 1.0 : 0.0);
    } else if (t == LUA_TTABLE && !test_tensor(L, -1)) {
      try {
        flatten_nested(L, -1, depth + 1, shape, values, saw_bool);
      } catch (...) {
        lua_pop(L, 1);
        throw;
      }
    } else {
      const std::string got = type_name(L, -1);
      lua_pop(L, 1);
      throw ArgumentError("torch.tensor: element " + std::to_string(i) + " at depth " +
                          std::to_string(depth + 1) + " is a " + got +
                          " (expected numbers, booleans or nested tables of them)");
    }
    lua_pop(L, 1);
  }
}

int t_tensor(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) == LUA_TNUMBER || lua_type(L, 1) == LUA_TBOOLEAN) {
      auto opts = creation_options(L, 2, "torch.tensor");
      push_tensor(L, tensor_or_scalar(L, 1, "torch.tensor")
                         ->to(opts.dtype().toScalarType())
                         .to(opts.device())
                         .set_requires_grad(opts.requires_grad()));
      return 1;
    }
    if (auto* t = test_tensor(L, 1)) {
      push_tensor(L, t->clone());
      return 1;
    }
    if (!lua_istable(L, 1)) {
      throw ArgumentError("torch.tensor: expected a (nested) table of numbers, got " +
                          type_name(L, 1));
    }
    std::vector<int64_t> shape;
    std::vector<double> values;
    bool saw_bool = false;
    flatten_nested(L, 1, 0, shape, values, saw_bool);
    auto opts = creation_options(L, 2, "torch.tensor", saw_bool ? torch::kBool : torch::kFloat32);
    auto t = torch::tensor(values, torch::kFloat64).view(shape).to(opts.dtype().toScalarType());
    push_tensor(L, t.to(opts.device()).set_requires_grad(opts.requires_grad()));
    return 1;
  });
}

template <Tensor (*Make)(c10::IntArrayRef, const torch::TensorOptions&)>
int t_filled(lua_State* L, const char* name) {
  return guarded(L, [&] {
    int next = 1;
    auto shape = read_shape(L, 1, name, &next);
    push_tensor(L, Make(shape, creation_options(L, next, name)));
    return 1;
  });
}

Tensor make_zeros(c10::IntArrayRef s, const torch::TensorOptions& o) {
  return torch::zeros(s, o);
}
Tensor make_ones(c10::IntArrayRef s, const torch::TensorOptions& o) {
  return torch::ones(s, o);
}
Tensor make_empty(c10::IntArrayRef s, const torch::TensorOptions& o) {
  return torch::empty(s, o);
}
Tensor make_rand(c10::IntArrayRef s, const torch::TensorOptions& o) {
  return torch::rand(s, o);
}
Tensor make_randn(c10::IntArrayRef s, const torch::TensorOptions& o) {
  return torch::randn(s, o);
}

int t_zeros(lua_State* L) {
  return t_filled<make_zeros>(L, "torch.zeros");
}
int t_ones(lua_State* L) {
  return t_filled<make_ones>(L, "torch.ones");
}
int t_empty(lua_State* L) {
  return t_filled<make_empty>(L, "torch.empty");
}
int t_rand(lua_State* L) {
  return t_filled<make_rand>(L, "torch.rand");
}
int t_randn(lua_State* L) {
  return t_filled<make_randn>(L, "torch.randn");
}

// torch.zeros_like(x[, opts]) and friends: x's shape, dtype and device unless opts say otherwise.
template <Tensor (*Make)(c10::IntArrayRef, const torch::TensorOptions&)>
int t_like(lua_State* L, const char* name) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, name);
    auto opts = creation_options(L, 2, name, x.scalar_type());
    if (lua_isnoneornil(L, 2)) opts = opts.device(x.device());
    push_tensor(L, Make(x.sizes(), opts));
    return 1;
  });
}

int t_zeros_like(lua_State* L) {
  return t_like<make_zeros>(L, "torch.zeros_like");
}
int t_ones_like(lua_State* L) {
  return t_like<make_ones>(L, "torch.ones_like");
}
int t_rand_like(lua_State* L) {
  return t_like<make_rand>(L, "torch.rand_like");
}
int t_randn_like(lua_State* L) {
  return t_like<make_randn>(L, "torch.randn_like");
}

int t_full_like(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "torch.full_like");
    const double value = check_number(L, 2, "torch.full_like");
    auto opts = creation_options(L, 3, "torch.full_like", x.scalar_type());
    push_tensor(L, torch::full(x.sizes(), value, opts));
    return 1;
  });
}

// torch.randint(low, high, shape[, opts]): integers in [low, high), int64 by default.
int t_randint(lua_State* L) {
  return guarded(L, [&] {
    const int64_t low = check_integer(L, 1, "torch.randint");
    const int64_t high = check_integer(L, 2, "torch.randint");
    int next = 3;
    auto shape = read_shape(L, 3, "torch.randint", &next);
    push_tensor(L, torch::randint(low, high, shape,
                                  creation_options(L, next, "torch.randint", torch::kInt64)));
    return 1;
  });
}

// torch.randperm(n): a permutation of 1..n (1-based, like every index in Lua).
int t_randperm(lua_State* L) {
  return guarded(L, [&] {
    const int64_t n = check_integer(L, 1, "torch.randperm");
    push_tensor(L, torch::randperm(n, creation_options(L, 2, "torch.randperm", torch::kInt64)) + 1);
    return 1;
  });
}

int t_logspace(lua_State* L) {
  return guarded(L, [&] {
    const double a = check_number(L, 1, "torch.logspace"), b = check_number(L, 2, "torch.logspace");
    const int64_t steps = check_integer(L, 3, "torch.logspace");
    push_tensor(L, torch::logspace(a, b, steps, 10.0, creation_options(L, 4, "torch.logspace")));
    return 1;
  });
}

int t_get_rng_state(lua_State* L) {
  return guarded(L, [&] {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    push_tensor(L, generator.get_state());
    return 1;
  });
}

int t_set_rng_state(lua_State* L) {
  return guarded(L, [&] {
    auto& state = check_tensor(L, 1, "torch.set_rng_state");
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
    return 0;
  });
}

// torch.autograd.grad{outputs = t or {...}, inputs = t or {...}[, grad_outputs][, retain_graph]
// [, create_graph]} -> one gradient per input (nil where an input is unused).
int t_autograd_grad(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "torch.autograd.grad",
              {"outputs", "inputs", "grad_outputs", "retain_graph", "create_graph"});
    auto list_field = [&](const char* key) {
      lua_pushstring(L, key);
      lua_rawget(L, 1);
      std::vector<Tensor> out;
      if (auto* t = test_tensor(L, -1)) {
        out.push_back(*t);
      } else if (!lua_isnil(L, -1)) {
        try {
          out = tensor_list(L, lua_gettop(L), "torch.autograd.grad");
        } catch (...) {
          lua_pop(L, 1);
          throw;
        }
      }
      lua_pop(L, 1);
      return out;
    };
    auto outputs = list_field("outputs");
    auto inputs = list_field("inputs");
    auto grad_outputs = list_field("grad_outputs");
    if (outputs.empty() || inputs.empty()) {
      throw ArgumentError("torch.autograd.grad: 'outputs' and 'inputs' are required");
    }
    const bool create_graph = o.boolean("create_graph", false);
    auto grads = torch::autograd::grad(outputs, inputs, grad_outputs,
                                       o.boolean("retain_graph", create_graph), create_graph,
                                       /*allow_unused=*/true);
    for (auto& g : grads) {
      if (g.defined()) {
        push_tensor(L, g);
      } else {
        lua_pushnil(L);
      }
    }
    return static_cast<int>(grads.size());
  });
}

int t_full(lua_State* L) {
  return guarded(L, [&] {
    int next = 1;
    auto shape = read_shape(L, 1, "torch.full", &next);
    const double value = check_number(L, next, "torch.full");
    push_tensor(L, torch::full(shape, value, creation_options(L, next + 1, "torch.full")));
    return 1;
  });
}

// torch.arange(end), torch.arange(start, end[, step]): PyTorch's half-open range.
int t_arange(lua_State* L) {
  return guarded(L, [&] {
    int n = 0;
    while (lua_type(L, n + 1) == LUA_TNUMBER) ++n;
    if (n < 1 || n > 3)
      throw ArgumentError("torch.arange: expected (end), (start, end) or (start, end, step)");
    const double a = lua_tonumber(L, 1);
    const double start = n == 1 ? 0 : a, end = n == 1 ? a : lua_tonumber(L, 2);
    const double step = n == 3 ? lua_tonumber(L, 3) : 1;
    bool integral =
        std::floor(start) == start && std::floor(end) == end && std::floor(step) == step;
    auto opts =
        creation_options(L, n + 1, "torch.arange", integral ? torch::kInt64 : torch::kFloat32);
    push_tensor(L, torch::arange(start, end, step, opts));
    return 1;
  });
}

int t_linspace(lua_State* L) {
  return guarded(L, [&] {
    const double a = check_number(L, 1, "torch.linspace"), b = check_number(L, 2, "torch.linspace");
    const int64_t steps = check_integer(L, 3, "torch.linspace");
    push_tensor(L, torch::linspace(a, b, steps, creation_options(L, 4, "torch.linspace")));
    return 1;
  });
}

int t_eye(lua_State* L) {
  return guarded(L, [&] {
    const int64_t n = check_integer(L, 1, "torch.eye");
    const int64_t m = lua_type(L, 2) == LUA_TNUMBER ? check_integer(L, 2, "torch.eye") : n;
    push_tensor(
        L,
        torch::eye(n, m, creation_options(L, lua_type(L, 2) == LUA_TNUMBER ? 3 : 2, "torch.eye")));
    return 1;
  });
}

int t_manual_seed(lua_State* L) {
  return guarded(L, [&] {
    core::seed_everything(static_cast<uint64_t>(check_integer(L, 1, "torch.manual_seed")));
    return 0;
  });
}

int t_is_tensor(lua_State* L) {
  lua_pushboolean(L, test_tensor(L, 1) != nullptr);
  return 1;
}

int t_cat(lua_State* L) {
  return guarded(L, [&] {
    auto list = tensor_list(L, 1, "torch.cat");
    const int64_t dim = lua_isnoneornil(L, 2) ? 0 : check_dim(L, 2, list[0].dim(), "torch.cat");
    push_tensor(L, torch::cat(list, dim));
    return 1;
  });
}

// torch.einsum('ij,jk->ik', {a, b}) or torch.einsum('ij,jk->ik', a, b)
int t_einsum(lua_State* L) {
  return guarded(L, [&] {
    const std::string equation = check_string(L, 1, "torch.einsum");
    std::vector<Tensor> operands;
    if (lua_istable(L, 2) && !test_tensor(L, 2)) {
      operands = tensor_list(L, 2, "torch.einsum");
    } else {
      for (int i = 2; i <= lua_gettop(L); ++i)
        operands.push_back(check_tensor(L, i, "torch.einsum"));
    }
    push_tensor(L, torch::einsum(equation, operands));
    return 1;
  });
}

int t_stack(lua_State* L) {
  return guarded(L, [&] {
    auto list = tensor_list(L, 1, "torch.stack");
    const int64_t dim =
        lua_isnoneornil(L, 2) ? 0 : check_dim(L, 2, list[0].dim() + 1, "torch.stack");
    push_tensor(L, torch::stack(list, dim));
    return 1;
  });
}

int t_where(lua_State* L) {
  return guarded(L, [&] {
    auto& cond = check_tensor(L, 1, "torch.where");
    auto a = tensor_or_scalar(L, 2, "torch.where"), b = tensor_or_scalar(L, 3, "torch.where");
    push_tensor(L, torch::where(cond, *a, *b));
    return 1;
  });
}

// torch.no_grad(fn, ...) / torch.enable_grad(fn, ...): run fn with gradient recording off / on.
template <bool Enabled>
int t_grad_mode(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  const bool previous = at::GradMode::is_enabled();
  at::GradMode::set_enabled(Enabled);
  const int nargs = lua_gettop(L) - 1;
  const int status = lua_pcall(L, nargs, LUA_MULTRET, 0);
  at::GradMode::set_enabled(previous);
  if (status != 0) return lua_error(L);
  return lua_gettop(L);
}

// torch.inference_mode(fn, ...): run fn under c10::InferenceMode (no autograd bookkeeping at
// all; its results cannot take part in autograd later), PyTorch's torch.inference_mode.
int t_inference_mode(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  int status;
  {
    c10::InferenceMode guard;
    status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  }
  if (status != 0) return lua_error(L);
  return lua_gettop(L);
}

// ---- printing -----------------------------------------------------------------------------------

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

// ---- indexing -----------------------------------------------------------------------------------

using torch::indexing::Slice;
using torch::indexing::TensorIndex;

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
      const int64_t v = static_cast<int64_t>(lua_tonumber(L, -1));
      lua_pop(L, 1);
      out.emplace_back(element_index(v, t.size(dim), dim));
    } else if (type == LUA_TTABLE) {
      const size_t m = lua_objlen(L, -1);
      const int64_t size = t.size(dim);
      int64_t a = 1, b = size;
      if (m >= 1) {
        lua_rawgeti(L, -1, 1);
        a = static_cast<int64_t>(lua_tonumber(L, -1));
        lua_pop(L, 1);
      }
      if (m >= 2) {
        lua_rawgeti(L, -1, 2);
        b = static_cast<int64_t>(lua_tonumber(L, -1));
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

int tensor_index(lua_State* L) {
  // Methods first: x:sum(), x.grad, then positional indexing.
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
    const char* key = lua_tostring(L, 2);
    if (std::string(key) == "grad") {
      return guarded(L, [&] {
        auto& t = check_tensor(L, 1, "grad");
        if (t.grad().defined()) {
          push_tensor(L, t.grad());
        } else {
          lua_pushnil(L);
        }
        return 1;
      });
    }
    lua_pushnil(L);
    return 1;
  }
  return guarded(L, [&] {
    auto& t = check_tensor(L, 1, "index");
    push_tensor(L, t.index(read_index(L, 2, t)));
    return 1;
  });
}

int tensor_newindex(lua_State* L) {
  return guarded(L, [&] {
    auto& t = check_tensor(L, 1, "index assignment");
    if (lua_type(L, 2) == LUA_TSTRING) {
      if (std::string(lua_tostring(L, 2)) == "grad" && lua_isnil(L, 3)) {
        t.mutable_grad() = Tensor();
        return 0;
      }
      throw ArgumentError(std::string("cannot set field '") + lua_tostring(L, 2) + "' of a Tensor");
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

// ---- methods
// --------------------------------------------------------------------------------------

Tensor& self(lua_State* L, const char* f) {
  return check_tensor(L, 1, f);
}

#define TENSOR_UNARY(NAME, EXPR) \
  int m_##NAME(lua_State* L) {   \
    return guarded(L, [&] {      \
      auto& x = self(L, #NAME);  \
      push_tensor(L, EXPR);      \
      return 1;                  \
    });                          \
  }

#define TENSOR_BINARY(NAME, EXPR)                       \
  int m_##NAME(lua_State* L) {                          \
    return guarded(L, [&] {                             \
      auto a_owner = tensor_or_scalar(L, 1, #NAME);     \
      auto b_owner = tensor_or_scalar(L, 2, #NAME);     \
      const torch::Tensor &a = *a_owner, &b = *b_owner; \
      push_tensor(L, EXPR);                             \
      return 1;                                         \
    });                                                 \
  }

#define TENSOR_INPLACE_BINARY(NAME, EXPR)           \
  int m_##NAME(lua_State* L) {                      \
    return guarded(L, [&] {                         \
      auto& a = self(L, #NAME);                     \
      auto b_owner = tensor_or_scalar(L, 2, #NAME); \
      const torch::Tensor& b = *b_owner;            \
      EXPR;                                         \
      lua_settop(L, 1);                             \
      return 1;                                     \
    });                                             \
  }

TENSOR_BINARY(add, a + b)
TENSOR_BINARY(sub, a - b)
TENSOR_BINARY(mul, a* b)
TENSOR_BINARY(div, a / b)
TENSOR_BINARY(pow, a.dim() == 0 && !test_tensor(L, 1) ? torch::pow(a.item(), b) : torch::pow(a, b))
TENSOR_BINARY(fmod, torch::fmod(a, b))
TENSOR_BINARY(remainder, torch::remainder(a, b))
TENSOR_BINARY(eq, a.eq(b))
TENSOR_BINARY(ne, a.ne(b))
TENSOR_BINARY(lt, a.lt(b))
TENSOR_BINARY(le, a.le(b))
TENSOR_BINARY(gt, a.gt(b))
TENSOR_BINARY(ge, a.ge(b))
TENSOR_BINARY(maximum, torch::maximum(a, b))
TENSOR_BINARY(minimum, torch::minimum(a, b))
TENSOR_BINARY(matmul, torch::matmul(a, b))
TENSOR_BINARY(mm, torch::mm(a, b))
TENSOR_BINARY(dot, torch::dot(a, b))
TENSOR_BINARY(bmm, torch::bmm(a, b))
TENSOR_BINARY(outer, torch::outer(a, b))
TENSOR_BINARY(logical_and, a.logical_and(b))
TENSOR_BINARY(logical_or, a.logical_or(b))
TENSOR_BINARY(logical_xor, a.logical_xor(b))

TENSOR_INPLACE_BINARY(add_, a.add_(b))
TENSOR_INPLACE_BINARY(sub_, a.sub_(b))
TENSOR_INPLACE_BINARY(mul_, a.mul_(b))
TENSOR_INPLACE_BINARY(div_, a.div_(b))
TENSOR_INPLACE_BINARY(fill_, a.fill_(b))
TENSOR_INPLACE_BINARY(copy_, a.copy_(b))
TENSOR_INPLACE_BINARY(pow_, a.pow_(b))
TENSOR_INPLACE_BINARY(fmod_, a.fmod_(b))
TENSOR_INPLACE_BINARY(remainder_, a.remainder_(b))
TENSOR_INPLACE_BINARY(maximum_, a.copy_(torch::maximum(a, b)))
TENSOR_INPLACE_BINARY(minimum_, a.copy_(torch::minimum(a, b)))

TENSOR_UNARY(neg, -x)
TENSOR_UNARY(abs, x.abs())
TENSOR_UNARY(exp, x.exp())
TENSOR_UNARY(log, x.log())
TENSOR_UNARY(sqrt, x.sqrt())
TENSOR_UNARY(rsqrt, x.rsqrt())
TENSOR_UNARY(square, x.square())
TENSOR_UNARY(sin, x.sin())
TENSOR_UNARY(cos, x.cos())
TENSOR_UNARY(floor, x.floor())
TENSOR_UNARY(ceil, x.ceil())
TENSOR_UNARY(round, x.round())
TENSOR_UNARY(sign, x.sign())
TENSOR_UNARY(relu, x.relu())
TENSOR_UNARY(sigmoid, x.sigmoid())
TENSOR_UNARY(tanh, x.tanh())
TENSOR_UNARY(clone, x.clone())
TENSOR_UNARY(contiguous, x.contiguous())
TENSOR_UNARY(detach, x.detach())
TENSOR_UNARY(t, x.t())
TENSOR_UNARY(float, x.to(torch::kFloat32))
TENSOR_UNARY(double, x.to(torch::kFloat64))
TENSOR_UNARY(half, x.to(torch::kFloat16))
TENSOR_UNARY(bfloat16, x.to(torch::kBFloat16))
TENSOR_UNARY(long, x.to(torch::kInt64))
TENSOR_UNARY(int, x.to(torch::kInt32))
TENSOR_UNARY(bool, x.to(torch::kBool))
TENSOR_UNARY(byte, x.to(torch::kUInt8))
TENSOR_UNARY(logical_not, x.logical_not())

// x:abs_() and the like: change x and return it.
#define TENSOR_INPLACE_UNARY(NAME)  \
  int m_##NAME##_(lua_State* L) {   \
    return guarded(L, [&] {         \
      self(L, #NAME "_").NAME##_(); \
      lua_settop(L, 1);             \
      return 1;                     \
    });                             \
  }

TENSOR_INPLACE_UNARY(neg)
TENSOR_INPLACE_UNARY(abs)
TENSOR_INPLACE_UNARY(exp)
TENSOR_INPLACE_UNARY(log)
TENSOR_INPLACE_UNARY(sqrt)
TENSOR_INPLACE_UNARY(rsqrt)
TENSOR_INPLACE_UNARY(square)
TENSOR_INPLACE_UNARY(sin)
TENSOR_INPLACE_UNARY(cos)
TENSOR_INPLACE_UNARY(floor)
TENSOR_INPLACE_UNARY(ceil)
TENSOR_INPLACE_UNARY(round)
TENSOR_INPLACE_UNARY(sign)
TENSOR_INPLACE_UNARY(relu)
TENSOR_INPLACE_UNARY(sigmoid)
TENSOR_INPLACE_UNARY(tanh)
TENSOR_INPLACE_UNARY(logical_not)
TENSOR_INPLACE_UNARY(t)

int m_zero_(lua_State* L) {
  return guarded(L, [&] {
    self(L, "zero_").zero_();
    lua_settop(L, 1);
    return 1;
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
    const int64_t start = element_index(check_integer(L, 3, "narrow"), x.size(dim), dim);
    push_tensor(L, x.narrow(dim, start, check_integer(L, 4, "narrow")));
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
    auto index = zero_based_index(check_tensor(L, 3, "index_select"), x.size(dim), "index_select");
    push_tensor(L, x.index_select(dim, index));
    return 1;
  });
}

int m_gather(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "gather");
    const int64_t dim = check_dim(L, 2, x.dim(), "gather");
    auto index = zero_based_index(check_tensor(L, 3, "gather"), x.size(dim), "gather");
    push_tensor(L, x.gather(dim, index));
    return 1;
  });
}

// Returns the result of an op that has an in-place form: x itself (at index 1) after the
// in-place op, or the new tensor.
int push_result(lua_State* L, bool in_place, const torch::Tensor& result) {
  if (in_place) {
    lua_settop(L, 1);
  } else {
    push_tensor(L, result);
  }
  return 1;
}

// x:scatter(dim, index, src) with src a tensor or a number; x:scatter_ changes x.
int scatter(lua_State* L, bool in_place) {
  const char* name = in_place ? "scatter_" : "scatter";
  return guarded(L, [&] {
    auto& x = self(L, name);
    const int64_t dim = check_dim(L, 2, x.dim(), name);
    auto index = zero_based_index(check_tensor(L, 3, name), x.size(dim), name);
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
      std::vector<int64_t> sizes;
      for (double v : number_list(L, 2, "split: sizes")) sizes.push_back(static_cast<int64_t>(v));
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

// x:sort([dim][, {descending = false}]) -> values, 1-based indices
int m_sort(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "sort");
    const bool has_dim = lua_type(L, 2) == LUA_TNUMBER;
    const int64_t dim = has_dim ? check_dim(L, 2, x.dim(), "sort") : -1;
    Options o(L, has_dim ? 3 : 2, "sort", {"descending"});
    auto [values, indices] = x.sort(dim, o.boolean("descending", false));
    push_tensor(L, values);
    push_tensor(L, indices + 1);
    return 2;
  });
}

// x:topk(k[, dim][, {largest = true, sorted = true}]) -> values, 1-based indices
int m_topk(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "topk");
    const int64_t k = check_integer(L, 2, "topk");
    const bool has_dim = lua_type(L, 3) == LUA_TNUMBER;
    const int64_t dim = has_dim ? check_dim(L, 3, x.dim(), "topk") : -1;
    Options o(L, has_dim ? 4 : 3, "topk", {"largest", "sorted"});
    auto [values, indices] = x.topk(k, dim, o.boolean("largest", true), o.boolean("sorted", true));
    push_tensor(L, values);
    push_tensor(L, indices + 1);
    return 2;
  });
}

int m_cumsum(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "cumsum");
    push_tensor(L, x.cumsum(check_dim(L, 2, x.dim(), "cumsum")));
    return 1;
  });
}

// x:clamp(min, max); either may be nil. x:clamp_ changes x.
int clamp(lua_State* L, bool in_place) {
  const char* name = in_place ? "clamp_" : "clamp";
  return guarded(L, [&] {
    auto& x = self(L, name);
    c10::optional<at::Scalar> lo, hi;
    if (!lua_isnoneornil(L, 2)) lo = check_number(L, 2, name);
    if (!lua_isnoneornil(L, 3)) hi = check_number(L, 3, name);
    if (!lo && !hi) throw ArgumentError(std::string(name) + ": give a minimum, a maximum or both");
    return push_result(L, in_place, in_place ? x.clamp_(lo, hi) : x.clamp(lo, hi));
  });
}
int m_clamp(lua_State* L) {
  return clamp(L, false);
}
int m_clamp_(lua_State* L) {
  return clamp(L, true);
}

// Random fills, as in PyTorch: x:uniform_([from = 0][, to = 1]), x:normal_([mean = 0][, std = 1]),
// x:bernoulli_([p = 0.5]).
double optional_number(lua_State* L, int index, double fallback, const char* function) {
  return lua_isnoneornil(L, index) ? fallback : check_number(L, index, function);
}
int m_uniform_(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "uniform_");
    x.uniform_(optional_number(L, 2, 0.0, "uniform_"), optional_number(L, 3, 1.0, "uniform_"));
    return push_result(L, true, x);
  });
}
int m_normal_(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "normal_");
    x.normal_(optional_number(L, 2, 0.0, "normal_"), optional_number(L, 3, 1.0, "normal_"));
    return push_result(L, true, x);
  });
}
int m_bernoulli_(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "bernoulli_");
    x.bernoulli_(optional_number(L, 2, 0.5, "bernoulli_"));
    return push_result(L, true, x);
  });
}

// x:norm([p][, dim][, {keepdim}]): p defaults to 2
int m_norm(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "norm");
    const double p = lua_isnoneornil(L, 2) ? 2.0 : check_number(L, 2, "norm");
    if (lua_isnoneornil(L, 3)) {
      push_tensor(L, x.norm(p));
      return 1;
    }
    const int64_t dim = check_dim(L, 3, x.dim(), "norm");
    Options o(L, 4, "norm", {"keepdim"});
    push_tensor(L, x.norm(p, {dim}, o.boolean("keepdim", false)));
    return 1;
  });
}

// Reductions: x:sum(), x:sum(dim), x:sum(dim, {keepdim = true}).
template <Tensor (*All)(const Tensor&), Tensor (*Along)(const Tensor&, int64_t, bool)>
int reduction(lua_State* L, const char* name) {
  return guarded(L, [&] {
    auto& x = self(L, name);
    if (lua_isnoneornil(L, 2)) {
      push_tensor(L, All(x));
      return 1;
    }
    const int64_t dim = check_dim(L, 2, x.dim(), name);
    Options o(L, 3, name, {"keepdim"});
    push_tensor(L, Along(x, dim, o.boolean("keepdim", false)));
    return 1;
  });
}

Tensor all_sum(const Tensor& x) {
  return x.sum();
}
Tensor dim_sum(const Tensor& x, int64_t d, bool k) {
  return x.sum(d, k);
}
Tensor all_mean(const Tensor& x) {
  return x.mean();
}
Tensor dim_mean(const Tensor& x, int64_t d, bool k) {
  return x.mean(d, k);
}
Tensor all_prod(const Tensor& x) {
  return x.prod();
}
Tensor dim_prod(const Tensor& x, int64_t d, bool k) {
  return x.prod(d, k);
}
Tensor all_std(const Tensor& x) {
  return x.std();
}
Tensor dim_std(const Tensor& x, int64_t d, bool k) {
  return x.std(d, true, k);
}
Tensor all_var(const Tensor& x) {
  return x.var();
}
Tensor dim_var(const Tensor& x, int64_t d, bool k) {
  return x.var(d, true, k);
}
Tensor all_logsumexp(const Tensor& x) {
  return x.flatten().logsumexp(0);
}
Tensor dim_logsumexp(const Tensor& x, int64_t d, bool k) {
  return x.logsumexp(d, k);
}
Tensor all_argmax(const Tensor& x) {
  return x.argmax() + 1;
}
Tensor dim_argmax(const Tensor& x, int64_t d, bool k) {
  return x.argmax(d, k) + 1;
}
Tensor all_argmin(const Tensor& x) {
  return x.argmin() + 1;
}
Tensor dim_argmin(const Tensor& x, int64_t d, bool k) {
  return x.argmin(d, k) + 1;
}

int m_sum(lua_State* L) {
  return reduction<all_sum, dim_sum>(L, "sum");
}
int m_mean(lua_State* L) {
  return reduction<all_mean, dim_mean>(L, "mean");
}
int m_prod(lua_State* L) {
  return reduction<all_prod, dim_prod>(L, "prod");
}
int m_std(lua_State* L) {
  return reduction<all_std, dim_std>(L, "std");
}
int m_var(lua_State* L) {
  return reduction<all_var, dim_var>(L, "var");
}
int m_logsumexp(lua_State* L) {
  return reduction<all_logsumexp, dim_logsumexp>(L, "logsumexp");
}
int m_argmax(lua_State* L) {
  return reduction<all_argmax, dim_argmax>(L, "argmax");
}
int m_argmin(lua_State* L) {
  return reduction<all_argmin, dim_argmin>(L, "argmin");
}

Tensor all_all(const Tensor& x) {
  return x.all();
}
Tensor dim_all(const Tensor& x, int64_t d, bool k) {
  return x.all(d, k);
}
Tensor all_any(const Tensor& x) {
  return x.any();
}
Tensor dim_any(const Tensor& x, int64_t d, bool k) {
  return x.any(d, k);
}
int m_all(lua_State* L) {
  return reduction<all_all, dim_all>(L, "all");
}
int m_any(lua_State* L) {
  return reduction<all_any, dim_any>(L, "any");
}

// x:equal(y): true when both have the same size and elements (torch.equal).
int m_equal(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "equal");
    lua_pushboolean(L, x.equal(check_tensor(L, 2, "equal")));
    return 1;
  });
}

// x:max() -> tensor; x:max(dim) -> values, indices (1-based); x:max(other) -> elementwise.
template <bool IsMax>
int m_extreme(lua_State* L) {
  const char* name = IsMax ? "max" : "min";
  return guarded(L, [&] {
    auto& x = self(L, name);
    if (lua_isnoneornil(L, 2)) {
      push_tensor(L, IsMax ? x.max() : x.min());
      return 1;
    }
    if (auto* other = test_tensor(L, 2)) {
      push_tensor(L, IsMax ? torch::maximum(x, *other) : torch::minimum(x, *other));
      return 1;
    }
    const int64_t dim = check_dim(L, 2, x.dim(), name);
    Options o(L, 3, name, {"keepdim"});
    auto [values, indices] =
        IsMax ? x.max(dim, o.boolean("keepdim", false)) : x.min(dim, o.boolean("keepdim", false));
    push_tensor(L, values);
    push_tensor(L, indices + 1);
    return 2;
  });
}

int m_softmax(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "softmax");
    push_tensor(L, x.softmax(check_dim(L, 2, x.dim(), "softmax")));
    return 1;
  });
}

int m_log_softmax(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "log_softmax");
    push_tensor(L, x.log_softmax(check_dim(L, 2, x.dim(), "log_softmax")));
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
int m_to(lua_State* L) {
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

int m_requires_grad(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "requires_grad");
    const bool on = lua_isnoneornil(L, 2) ? true : lua_toboolean(L, 2) != 0;
    x.set_requires_grad(on);
    lua_settop(L, 1);
    return 1;
  });
}

int m_is_requires_grad(lua_State* L) {
  return guarded(L, [&] {
    lua_pushboolean(L, self(L, "is_requires_grad").requires_grad());
    return 1;
  });
}

int m_backward(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "backward");
    if (auto* g = test_tensor(L, 2)) {
      x.backward(*g);
    } else {
      if (x.numel() != 1) {
        throw ArgumentError("backward: a tensor of " + std::to_string(x.numel()) +
                            " elements needs a gradient argument (backward(grad))");
      }
      x.backward();
    }
    return 0;
  });
}

int m_tostring(lua_State* L) {
  return guarded(L, [&] {
    const std::string s = tensor_string(self(L, "tostring"));
    lua_pushlstring(L, s.data(), s.size());
    return 1;
  });
}

int m_len(lua_State* L) {
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

// ---- torch.linalg ---------------------------------------------------------------------------

#define LINALG_UNARY(NAME, EXPR)                           \
  int la_##NAME(lua_State* L) {                            \
    return guarded(L, [&] {                                \
      auto& x = check_tensor(L, 1, "torch.linalg." #NAME); \
      push_tensor(L, EXPR);                                \
      return 1;                                            \
    });                                                    \
  }

LINALG_UNARY(inv, torch::linalg::inv(x))
LINALG_UNARY(det, torch::linalg::det(x))
LINALG_UNARY(cholesky, torch::linalg::cholesky(x))
LINALG_UNARY(pinv, torch::linalg_pinv(x, c10::optional<double>(), c10::optional<double>(), false))
LINALG_UNARY(matrix_rank,
             torch::linalg_matrix_rank(x, c10::optional<double>(), c10::optional<double>(), false))

int la_solve(lua_State* L) {
  return guarded(L, [&] {
    auto& a = check_tensor(L, 1, "torch.linalg.solve");
    auto& b = check_tensor(L, 2, "torch.linalg.solve");
    push_tensor(L, torch::linalg::solve(a, b, true));
    return 1;
  });
}

// Several results: qr -> Q, R; svd -> U, S, Vh; eigh -> eigenvalues, eigenvectors; slogdet.
int la_qr(lua_State* L) {
  return guarded(L, [&] {
    auto [q, r] = torch::linalg::qr(check_tensor(L, 1, "torch.linalg.qr"), "reduced");
    push_tensor(L, q);
    push_tensor(L, r);
    return 2;
  });
}

int la_svd(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "torch.linalg.svd");
    Options o(L, 2, "torch.linalg.svd", {"full_matrices"});
    auto [u, s, vh] = torch::linalg::svd(x, o.boolean("full_matrices", true), c10::nullopt);
    push_tensor(L, u);
    push_tensor(L, s);
    push_tensor(L, vh);
    return 3;
  });
}

int la_eigh(lua_State* L) {
  return guarded(L, [&] {
    auto [values, vectors] = torch::linalg::eigh(check_tensor(L, 1, "torch.linalg.eigh"), "L");
    push_tensor(L, values);
    push_tensor(L, vectors);
    return 2;
  });
}

int la_slogdet(lua_State* L) {
  return guarded(L, [&] {
    auto [sign, logabsdet] = torch::linalg::slogdet(check_tensor(L, 1, "torch.linalg.slogdet"));
    push_tensor(L, sign);
    push_tensor(L, logabsdet);
    return 2;
  });
}

// vector_norm(x[, ord][, dim][, {keepdim}]), matrix_norm(x[, ord]) with ord a number or
// 'fro'/'nuc'.
int la_vector_norm(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "torch.linalg.vector_norm");
    const double ord = lua_isnoneornil(L, 2) ? 2.0 : check_number(L, 2, "torch.linalg.vector_norm");
    c10::optional<std::vector<int64_t>> dims;
    if (!lua_isnoneornil(L, 3))
      dims = std::vector<int64_t>{check_dim(L, 3, x.dim(), "torch.linalg.vector_norm")};
    Options o(L, 4, "torch.linalg.vector_norm", {"keepdim"});
    push_tensor(
        L, torch::linalg::vector_norm(x, ord, dims ? c10::OptionalIntArrayRef(*dims) : c10::nullopt,
                                      o.boolean("keepdim", false), c10::nullopt));
    return 1;
  });
}

int la_matrix_norm(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "torch.linalg.matrix_norm");
    if (lua_type(L, 2) == LUA_TSTRING) {
      const std::string ord = lua_tostring(L, 2);
      if (ord != "fro" && ord != "nuc")
        throw ArgumentError("torch.linalg.matrix_norm: ord must be a number, 'fro' or 'nuc'");
      push_tensor(L, torch::linalg::matrix_norm(x, ord, {-2, -1}, false, c10::nullopt));
    } else {
      const double ord =
          lua_isnoneornil(L, 2) ? 2.0 : check_number(L, 2, "torch.linalg.matrix_norm");
      if (lua_isnoneornil(L, 2)) {
        push_tensor(L, torch::linalg::matrix_norm(x, "fro", {-2, -1}, false, c10::nullopt));
      } else {
        push_tensor(L, torch::linalg::matrix_norm(x, ord, {-2, -1}, false, c10::nullopt));
      }
    }
    return 1;
  });
}

const luaL_Reg kLinalg[] = {{"inv", la_inv},
                            {"det", la_det},
                            {"cholesky", la_cholesky},
                            {"pinv", la_pinv},
                            {"matrix_rank", la_matrix_rank},
                            {"solve", la_solve},
                            {"qr", la_qr},
                            {"svd", la_svd},
                            {"eigh", la_eigh},
                            {"slogdet", la_slogdet},
                            {"vector_norm", la_vector_norm},
                            {"matrix_norm", la_matrix_norm},
                            {nullptr, nullptr}};

const luaL_Reg kMethods[] = {{"add", m_add},
                             {"sub", m_sub},
                             {"mul", m_mul},
                             {"div", m_div},
                             {"pow", m_pow},
                             {"fmod", m_fmod},
                             {"remainder", m_remainder},
                             {"eq", m_eq},
                             {"ne", m_ne},
                             {"lt", m_lt},
                             {"le", m_le},
                             {"gt", m_gt},
                             {"ge", m_ge},
                             {"maximum", m_maximum},
                             {"minimum", m_minimum},
                             {"matmul", m_matmul},
                             {"mm", m_mm},
                             {"dot", m_dot},
                             {"add_", m_add_},
                             {"sub_", m_sub_},
                             {"mul_", m_mul_},
                             {"div_", m_div_},
                             {"fill_", m_fill_},
                             {"copy_", m_copy_},
                             {"zero_", m_zero_},
                             {"logical_and", m_logical_and},
                             {"logical_or", m_logical_or},
                             {"logical_xor", m_logical_xor},
                             {"neg_", m_neg_},
                             {"abs_", m_abs_},
                             {"exp_", m_exp_},
                             {"log_", m_log_},
                             {"sqrt_", m_sqrt_},
                             {"rsqrt_", m_rsqrt_},
                             {"square_", m_square_},
                             {"sin_", m_sin_},
                             {"cos_", m_cos_},
                             {"floor_", m_floor_},
                             {"ceil_", m_ceil_},
                             {"round_", m_round_},
                             {"sign_", m_sign_},
                             {"relu_", m_relu_},
                             {"sigmoid_", m_sigmoid_},
                             {"tanh_", m_tanh_},
                             {"logical_not_", m_logical_not_},
                             {"t_", m_t_},
                             {"pow_", m_pow_},
                             {"fmod_", m_fmod_},
                             {"remainder_", m_remainder_},
                             {"maximum_", m_maximum_},
                             {"minimum_", m_minimum_},
                             {"scatter_", m_scatter_},
                             {"masked_fill_", m_masked_fill_},
                             {"clamp_", m_clamp_},
                             {"uniform_", m_uniform_},
                             {"normal_", m_normal_},
                             {"bernoulli_", m_bernoulli_},
                             {"neg", m_neg},
                             {"abs", m_abs},
                             {"exp", m_exp},
                             {"log", m_log},
                             {"sqrt", m_sqrt},
                             {"rsqrt", m_rsqrt},
                             {"square", m_square},
                             {"sin", m_sin},
                             {"cos", m_cos},
                             {"floor", m_floor},
                             {"ceil", m_ceil},
                             {"round", m_round},
                             {"sign", m_sign},
                             {"relu", m_relu},
                             {"sigmoid", m_sigmoid},
                             {"tanh", m_tanh},
                             {"logical_not", m_logical_not},
                             {"clone", m_clone},
                             {"contiguous", m_contiguous},
                             {"detach", m_detach},
                             {"t", m_t},
                             {"float", m_float},
                             {"double", m_double},
                             {"half", m_half},
                             {"bfloat16", m_bfloat16},
                             {"long", m_long},
                             {"int", m_int},
                             {"bool", m_bool},
                             {"byte", m_byte},
                             {"size", m_size},
                             {"dim", m_dim},
                             {"numel", m_numel},
                             {"dtype", m_dtype},
                             {"device", m_device},
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
                             {"repeat_tensor", m_repeat},  // `repeat` is a Lua keyword
                             {"unflatten", m_unflatten},
                             {"sort", m_sort},
                             {"topk", m_topk},
                             {"cumsum", m_cumsum},
                             {"clamp", m_clamp},
                             {"norm", m_norm},
                             {"bmm", m_bmm},
                             {"outer", m_outer},
                             {"sum", m_sum},
                             {"mean", m_mean},
                             {"prod", m_prod},
                             {"std", m_std},
                             {"var", m_var},
                             {"logsumexp", m_logsumexp},
                             {"argmax", m_argmax},
                             {"argmin", m_argmin},
                             {"all", m_all},
                             {"any", m_any},
                             {"equal", m_equal},
                             {"max", m_extreme<true>},
                             {"min", m_extreme<false>},
                             {"softmax", m_softmax},
                             {"log_softmax", m_log_softmax},
                             {"item", m_item},
                             {"totable", m_totable},
                             {"to", m_to},
                             {"requires_grad", m_requires_grad},
                             {"is_requires_grad", m_is_requires_grad},
                             {"backward", m_backward},
                             {nullptr, nullptr}};

const luaL_Reg kMeta[] = {{"__add", m_add},
                          {"__sub", m_sub},
                          {"__mul", m_mul},
                          {"__div", m_div},
                          {"__mod", m_remainder},
                          {"__pow", m_pow},
                          {"__unm", m_neg},
                          {"__tostring", m_tostring},
                          {"__len", m_len},
                          {"__eq", m_eq_identity},
                          {"__newindex", tensor_newindex},
                          {nullptr, nullptr}};

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

const luaL_Reg kFunctions[] = {{"tensor", t_tensor},
                               {"zeros", t_zeros},
                               {"ones", t_ones},
                               {"empty", t_empty},
                               {"full", t_full},
                               {"rand", t_rand},
                               {"randn", t_randn},
                               {"arange", t_arange},
                               {"linspace", t_linspace},
                               {"eye", t_eye},
                               {"manual_seed", t_manual_seed},
                               {"is_tensor", t_is_tensor},
                               {"cat", t_cat},
                               {"zeros_like", t_zeros_like},
                               {"ones_like", t_ones_like},
                               {"rand_like", t_rand_like},
                               {"randn_like", t_randn_like},
                               {"full_like", t_full_like},
                               {"randint", t_randint},
                               {"randperm", t_randperm},
                               {"logspace", t_logspace},
                               {"get_rng_state", t_get_rng_state},
                               {"set_rng_state", t_set_rng_state},
                               {"einsum", t_einsum},
                               {"stack", t_stack},
                               {"where", t_where},
                               {"no_grad", t_grad_mode<false>},
                               {"enable_grad", t_grad_mode<true>},
                               {"inference_mode", t_inference_mode},
                               {nullptr, nullptr}};

}  // namespace

int open_torch(lua_State* L) {
  define_type(L, TensorBox::kTypeName, kMethods, kMeta, gc_tensor, tensor_index);
  push_metatable(L, TensorBox::kTypeName);
  lua_getfield(L, -1, "__methods");
  lua_newtable(L);  // the torch library
  luaL_setfuncs(L, kFunctions, 0);
  register_memory_functions(L, -1, -2);
  register_serialization(L);
  lua_newtable(L);  // torch.linalg
  luaL_setfuncs(L, kLinalg, 0);
  lua_setfield(L, -2, "linalg");
  lua_newtable(L);  // torch.autograd
  lua_pushcfunction(L, t_autograd_grad);
  lua_setfield(L, -2, "grad");
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
