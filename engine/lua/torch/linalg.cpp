// Part of require 'torch'. torch.linalg: inv, det, cholesky, pinv, matrix_rank, solve, qr, svd,
// eigh, slogdet, vector_norm, matrix_norm. Dimensions and index values are 1-based in Lua and
// converted here (LUA_API.md). ATen's functions (at::linalg_*) rather than torch::linalg, which
// libtorch 2.x no longer ships; the C++ API's were thin wrappers of these.
#include "engine/lua/torch/torch_tables.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

#define LINALG_UNARY(NAME, EXPR)                           \
  int la_##NAME(lua_State* L) {                            \
    return guarded(L, [&] {                                \
      auto& x = check_tensor(L, 1, "torch.linalg." #NAME); \
      push_tensor(L, EXPR);                                \
      return 1;                                            \
    });                                                    \
  }

LINALG_UNARY(inv, at::linalg_inv(x))
LINALG_UNARY(det, at::linalg_det(x))
LINALG_UNARY(cholesky, at::linalg_cholesky(x))
LINALG_UNARY(pinv, torch::linalg_pinv(x, c10::optional<double>(), c10::optional<double>(), false))
LINALG_UNARY(matrix_rank,
             torch::linalg_matrix_rank(x, c10::optional<double>(), c10::optional<double>(), false))

int la_solve(lua_State* L) {
  return guarded(L, [&] {
    auto& a = check_tensor(L, 1, "torch.linalg.solve");
    auto& b = check_tensor(L, 2, "torch.linalg.solve");
    push_tensor(L, at::linalg_solve(a, b, true));
    return 1;
  });
}

// Several results: qr -> Q, R; svd -> U, S, Vh; eigh -> eigenvalues, eigenvectors; slogdet.
int la_qr(lua_State* L) {
  return guarded(L, [&] {
    auto [q, r] = at::linalg_qr(check_tensor(L, 1, "torch.linalg.qr"), "reduced");
    push_tensor(L, q);
    push_tensor(L, r);
    return 2;
  });
}

int la_svd(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "torch.linalg.svd");
    Options o(L, 2, "torch.linalg.svd", {"full_matrices"});
    auto [u, s, vh] = at::linalg_svd(x, o.boolean("full_matrices", true), c10::nullopt);
    push_tensor(L, u);
    push_tensor(L, s);
    push_tensor(L, vh);
    return 3;
  });
}

int la_eigh(lua_State* L) {
  return guarded(L, [&] {
    auto [values, vectors] = at::linalg_eigh(check_tensor(L, 1, "torch.linalg.eigh"), "L");
    push_tensor(L, values);
    push_tensor(L, vectors);
    return 2;
  });
}

int la_slogdet(lua_State* L) {
  return guarded(L, [&] {
    auto [sign, logabsdet] = at::linalg_slogdet(check_tensor(L, 1, "torch.linalg.slogdet"));
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
        L, at::linalg_vector_norm(x, ord, dims ? c10::OptionalIntArrayRef(*dims) : c10::nullopt,
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
      push_tensor(L, at::linalg_matrix_norm(x, ord, {-2, -1}, false, c10::nullopt));
    } else {
      const double ord =
          lua_isnoneornil(L, 2) ? 2.0 : check_number(L, 2, "torch.linalg.matrix_norm");
      if (lua_isnoneornil(L, 2)) {
        push_tensor(L, at::linalg_matrix_norm(x, "fro", {-2, -1}, false, c10::nullopt));
      } else {
        push_tensor(L, at::linalg_matrix_norm(x, ord, {-2, -1}, false, c10::nullopt));
      }
    }
    return 1;
  });
}

const Binding kLinalg[] = {{"inv", la_inv},
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

}  // namespace

const Binding* linalg_functions() {
  return kLinalg;
}

}  // namespace engine::lua
