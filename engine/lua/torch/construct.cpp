// Part of require 'torch'. Construction: torch.tensor, zeros, ones, rand..., arange, cat, stack,
// where, the generator's state. Dimensions and index values are 1-based in Lua and converted here
// (LUA_API.md).
#include <ATen/CPUGeneratorImpl.h>
#include <mutex>

#include "engine/core/device.hpp"
#include "engine/core/seed.hpp"
#include "engine/lua/torch/torch_tables.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

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

const Binding kConstructMethods[] = {{nullptr, nullptr}};
const luaL_Reg kConstructMeta[] = {{nullptr, nullptr}};
const Binding kConstructFunctions[] = {{"tensor", t_tensor},
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
                                       {nullptr, nullptr}};

}  // namespace

TorchTables construct_tables() {
  return {kConstructMethods, kConstructMeta, kConstructFunctions};
}

}  // namespace engine::lua
