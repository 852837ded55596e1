// Part of require 'torch'. Elementwise math: + - * / ^, comparisons, unary functions and their
// in-place forms, clamp, sort, topk, cumsum, softmax, random fills. Dimensions and index values are
// 1-based in Lua and converted here (LUA_API.md).
#include "engine/lua/torch/torch_tables.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

// The bodies of the elementwise methods, inside guarded(): the method's tensors read (a number
// for a tensor argument becomes a tensor), the expression's result pushed, or for an in-place
// method the tensor itself returned.
template <typename Expr>
int unary_method(lua_State* L, const char* name, Expr expr) {
  return guarded(L, [&] {
    push_tensor(L, expr(self(L, name)));
    return 1;
  });
}

template <typename Expr>
int binary_method(lua_State* L, const char* name, Expr expr) {
  return guarded(L, [&] {
    const auto a = tensor_or_scalar(L, 1, name);
    const auto b = tensor_or_scalar(L, 2, name);
    push_tensor(L, expr(*a, *b));
    return 1;
  });
}

template <typename Expr>
int inplace_binary_method(lua_State* L, const char* name, Expr expr) {
  return guarded(L, [&] {
    auto& a = self(L, name);
    const auto b = tensor_or_scalar(L, 2, name);
    expr(a, *b);
    lua_settop(L, 1);
    return 1;
  });
}

#define TENSOR_UNARY(NAME, EXPR)                                              \
  int m_##NAME(lua_State* L) {                                                \
    return unary_method(L, #NAME, [&](Tensor& x) -> Tensor { return EXPR; }); \
  }

#define TENSOR_BINARY(NAME, EXPR)                                                           \
  int m_##NAME(lua_State* L) {                                                              \
    return binary_method(L, #NAME,                                                          \
                         [&](const Tensor& a, const Tensor& b) -> Tensor { return EXPR; }); \
  }

#define TENSOR_INPLACE_BINARY(NAME, EXPR)                                              \
  int m_##NAME(lua_State* L) {                                                         \
    return inplace_binary_method(L, #NAME, [&](Tensor& a, const Tensor& b) { EXPR; }); \
  }

TENSOR_BINARY(add, a + b)
TENSOR_BINARY(sub, a - b)
TENSOR_BINARY(mul, a* b)
TENSOR_BINARY(div, a / b)
// x:pow(n), x ^ n and x:pow_(n) with a number n take PyTorch's Scalar overload, as Python's do:
// its kernel squares for 2, takes roots for 0.5 and -0.5, reciprocals for -1 (16 times faster for
// 2 on a 2.5M-element tensor than an elementwise pow against a wrapped number, the same values)
int m_pow(lua_State* L) {
  auto* base = test_tensor(L, 1);
  if (base && lua_type(L, 2) == LUA_TNUMBER) {
    return guarded(L, [&] {
      push_tensor(L, torch::pow(*base, number_scalar(lua_tonumber(L, 2))));
      return 1;
    });
  }
  return binary_method(L, "pow", [&](const Tensor& a, const Tensor& b) -> Tensor {
    return a.dim() == 0 && !test_tensor(L, 1) ? torch::pow(a.item(), b) : torch::pow(a, b);
  });
}
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
int m_pow_(lua_State* L) {
  if (test_tensor(L, 1) && lua_type(L, 2) == LUA_TNUMBER) {
    return guarded(L, [&] {
      self(L, "pow_").pow_(number_scalar(lua_tonumber(L, 2)));
      lua_settop(L, 1);
      return 1;
    });
  }
  return inplace_binary_method(L, "pow_", [&](Tensor& a, const Tensor& b) { a.pow_(b); });
}
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
TENSOR_UNARY(log1p, x.log1p())
TENSOR_UNARY(log2, x.log2())
TENSOR_UNARY(log10, x.log10())
TENSOR_UNARY(expm1, x.expm1())
TENSOR_UNARY(tan, x.tan())
TENSOR_UNARY(asin, x.asin())
TENSOR_UNARY(acos, x.acos())
TENSOR_UNARY(atan, x.atan())
TENSOR_UNARY(sinh, x.sinh())
TENSOR_UNARY(cosh, x.cosh())
TENSOR_UNARY(erf, x.erf())
TENSOR_UNARY(reciprocal, x.reciprocal())
TENSOR_UNARY(trunc, x.trunc())
TENSOR_UNARY(frac, x.frac())
TENSOR_UNARY(isnan, x.isnan())
TENSOR_UNARY(isinf, x.isinf())
TENSOR_UNARY(isfinite, x.isfinite())
TENSOR_BINARY(atan2, torch::atan2(a, b))

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
TENSOR_INPLACE_UNARY(log1p)
TENSOR_INPLACE_UNARY(expm1)
TENSOR_INPLACE_UNARY(reciprocal)
TENSOR_INPLACE_UNARY(trunc)

int m_zero_(lua_State* L) {
  return guarded(L, [&] {
    self(L, "zero_").zero_();
    lua_settop(L, 1);
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
    return push_with_positions(L, x.sort(dim, o.boolean("descending", false)));
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
    return push_with_positions(
        L, x.topk(k, dim, o.boolean("largest", true), o.boolean("sorted", true)));
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
int m_uniform_(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "uniform_");
    x.uniform_(number_or(L, 2, 0.0, "uniform_"), number_or(L, 3, 1.0, "uniform_"));
    return push_result(L, true, x);
  });
}
int m_normal_(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "normal_");
    x.normal_(number_or(L, 2, 0.0, "normal_"), number_or(L, 3, 1.0, "normal_"));
    return push_result(L, true, x);
  });
}
int m_bernoulli_(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "bernoulli_");
    x.bernoulli_(number_or(L, 2, 0.5, "bernoulli_"));
    return push_result(L, true, x);
  });
}

// x:random_(to) or x:random_(from, to): integers in [from, to), PyTorch's (from defaults to 0).
int m_random_(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "random_");
    if (lua_isnoneornil(L, 2)) throw ArgumentError("random_: give `to`, or `from` and `to`");
    if (lua_isnoneornil(L, 3)) {
      x.random_(check_integer(L, 2, "random_"));
    } else {
      x.random_(check_integer(L, 2, "random_"), check_integer(L, 3, "random_"));
    }
    return push_result(L, true, x);
  });
}

int m_exponential_(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "exponential_");
    x.exponential_(number_or(L, 2, 1.0, "exponential_"));
    return push_result(L, true, x);
  });
}

// x:multinomial(n[, {replacement = false}]): n draws per row of the weights x, as 1-based
// positions (what index_select and indexing take).
int m_multinomial(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "multinomial");
    const int64_t n = check_integer(L, 2, "multinomial");
    Options o(L, 3, "multinomial", {"replacement"});
    push_tensor(L, x.multinomial(n, o.boolean("replacement", false)) + 1);
    return 1;
  });
}

int m_equal(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "equal");
    lua_pushboolean(L, x.equal(check_tensor(L, 2, "equal")));
    return 1;
  });
}

// x:max() -> tensor; x:max(dim) -> values, indices (1-based); x:max(other) -> elementwise.

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

const Binding kMathMethods[] = {
    {"add", m_add},
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
    {"sort", m_sort},
    {"topk", m_topk},
    {"cumsum", m_cumsum},
    {"clamp", m_clamp},
    {"bmm", m_bmm},
    {"outer", m_outer},
    {"equal", m_equal},
    {"softmax", m_softmax},
    {"log_softmax", m_log_softmax},
    {"log1p", m_log1p},
    {"log2", m_log2},
    {"log10", m_log10},
    {"expm1", m_expm1},
    {"tan", m_tan},
    {"asin", m_asin},
    {"acos", m_acos},
    {"atan", m_atan},
    {"arcsin", m_asin},
    {"arccos", m_acos},
    {"arctan", m_atan},
    {"atan2", m_atan2},
    {"sinh", m_sinh},
    {"cosh", m_cosh},
    {"erf", m_erf},
    {"reciprocal", m_reciprocal},
    {"trunc", m_trunc},
    {"frac", m_frac},
    {"isnan", m_isnan},
    {"isinf", m_isinf},
    {"isfinite", m_isfinite},
    {"log1p_", m_log1p_},
    {"expm1_", m_expm1_},
    {"reciprocal_", m_reciprocal_},
    {"trunc_", m_trunc_},
    {"clip", m_clamp},
    {"clip_", m_clamp_},
    {"divide", m_div},
    {"multiply", m_mul},
    {"subtract", m_sub},
    {"random_", m_random_},
    {"exponential_", m_exponential_},
    {"multinomial", m_multinomial, "", "the draws are 1-based positions, as every index in Lua"},
    {nullptr, nullptr}};
const luaL_Reg kMathMeta[] = {{"__add", m_add}, {"__sub", m_sub},       {"__mul", m_mul},
                              {"__div", m_div}, {"__mod", m_remainder}, {"__pow", m_pow},
                              {"__unm", m_neg}, {nullptr, nullptr}};
const Binding kMathFunctions[] = {{nullptr, nullptr}};

}  // namespace

TorchTables math_tables() {
  return {kMathMethods, kMathMeta, kMathFunctions};
}

}  // namespace engine::lua
