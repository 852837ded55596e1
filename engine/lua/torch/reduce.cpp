// Part of require 'torch'. Reductions: sum, mean, prod, std, var, logsumexp, argmax/argmin,
// max/min, all/any, norm. Dimensions and index values are 1-based in Lua and converted here
// (LUA_API.md).
#include <optional>

#include "engine/lua/torch/torch_tables.hpp"

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

enum class Reduce { kSum, kMean, kProd, kStd, kVar, kLogsumexp, kArgmax, kArgmin, kAll, kAny };

// One reduction over all elements (no dim) or along a 0-based dim; argmax and argmin give
// 1-based positions, as Lua counts.
Tensor reduce(Reduce r, const Tensor& x, std::optional<int64_t> dim, bool keep) {
  switch (r) {
    case Reduce::kSum:
      return dim ? x.sum(*dim, keep) : x.sum();
    case Reduce::kMean:
      return dim ? x.mean(*dim, keep) : x.mean();
    case Reduce::kProd:
      return dim ? x.prod(*dim, keep) : x.prod();
    case Reduce::kStd:
      return dim ? x.std(*dim, true, keep) : x.std();
    case Reduce::kVar:
      return dim ? x.var(*dim, true, keep) : x.var();
    case Reduce::kLogsumexp:
      return dim ? x.logsumexp(*dim, keep) : x.flatten().logsumexp(0);
    case Reduce::kArgmax:
      return (dim ? x.argmax(*dim, keep) : x.argmax()) + 1;
    case Reduce::kArgmin:
      return (dim ? x.argmin(*dim, keep) : x.argmin()) + 1;
    case Reduce::kAll:
      return dim ? x.all(*dim, keep) : x.all();
    case Reduce::kAny:
      return dim ? x.any(*dim, keep) : x.any();
  }
  return x;
}

// keepdim given as PyTorch's positional argument (x:sum(2, true)) or as an option
// (x:sum(2, {keepdim = true})).
bool keepdim_argument(lua_State* L, int index, const char* name) {
  if (lua_isboolean(L, index)) return lua_toboolean(L, index) != 0;
  Options o(L, index, name, {"keepdim"});
  return o.boolean("keepdim", false);
}

// x:sum(), x:sum(dim), x:sum(dim, {keepdim = true}); the same for every reduction above.
template <Reduce R>
int reduction(lua_State* L) {
  static const char* const kNames[] = {"sum",       "mean",   "prod",   "std", "var",
                                       "logsumexp", "argmax", "argmin", "all", "any"};
  const char* name = kNames[static_cast<int>(R)];
  return guarded(L, [&] {
    auto& x = self(L, name);
    if (lua_isnoneornil(L, 2)) {
      push_tensor(L, reduce(R, x, std::nullopt, false));
      return 1;
    }
    const int64_t dim = check_dim(L, 2, x.dim(), name);
    push_tensor(L, reduce(R, x, dim, keepdim_argument(L, 3, name)));
    return 1;
  });
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
    const bool keep = keepdim_argument(L, 3, name);
    return push_with_positions(L, IsMax ? x.max(dim, keep) : x.min(dim, keep));
  });
}

const Binding kReduceMethods[] = {{"norm", m_norm},
                                  {"sum", reduction<Reduce::kSum>},
                                  {"mean", reduction<Reduce::kMean>},
                                  {"prod", reduction<Reduce::kProd>},
                                  {"std", reduction<Reduce::kStd>},
                                  {"var", reduction<Reduce::kVar>},
                                  {"logsumexp", reduction<Reduce::kLogsumexp>},
                                  {"argmax", reduction<Reduce::kArgmax>},
                                  {"argmin", reduction<Reduce::kArgmin>},
                                  {"all", reduction<Reduce::kAll>},
                                  {"any", reduction<Reduce::kAny>},
                                  {"max", m_extreme<true>},
                                  {"min", m_extreme<false>},
                                  {nullptr, nullptr}};
const luaL_Reg kReduceMeta[] = {{nullptr, nullptr}};
const Binding kReduceFunctions[] = {{nullptr, nullptr}};

}  // namespace

TorchTables reduce_tables() {
  return {kReduceMethods, kReduceMeta, kReduceFunctions};
}

}  // namespace engine::lua
