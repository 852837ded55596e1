// Part of require 'torch'. Reductions: sum, mean, prod, std, var, logsumexp, argmax/argmin,
// max/min, all/any, norm. Dimensions and index values are 1-based in Lua and converted here
// (LUA_API.md).
#include "engine/lua/torch/torch_parts.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

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

const luaL_Reg kMethods[] = {{"norm", m_norm},
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
                             {"max", m_extreme<true>},
                             {"min", m_extreme<false>},
                             {nullptr, nullptr}};
const luaL_Reg kMeta[] = {{nullptr, nullptr}};
const luaL_Reg kFunctions[] = {{nullptr, nullptr}};

}  // namespace

TorchPart reduce_part() {
  return {kMethods, kMeta, kFunctions};
}

}  // namespace engine::lua
