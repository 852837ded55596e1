// Part of require 'torch'. Elements rearranged or picked by position: tril, triu, diag, diff,
// roll, flip, swapaxes, movedim, nonzero, torch.meshgrid. Dimensions and the positions nonzero
// returns are 1-based (LUA_API.md); diagonal offsets are PyTorch's (0 is the main diagonal).
#include "engine/lua/torch/torch_tables.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

int m_tril(lua_State* L) {
  return guarded(L, [&] {
    push_tensor(L, self(L, "tril").tril(integer_or(L, 2, 0, "tril")));
    return 1;
  });
}
int m_triu(lua_State* L) {
  return guarded(L, [&] {
    push_tensor(L, self(L, "triu").triu(integer_or(L, 2, 0, "triu")));
    return 1;
  });
}
int m_diag(lua_State* L) {
  return guarded(L, [&] {
    push_tensor(L, self(L, "diag").diag(integer_or(L, 2, 0, "diag")));
    return 1;
  });
}

// x:diff([n = 1][, dim = -1])
int m_diff(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "diff");
    const int64_t n = integer_or(L, 2, 1, "diff");
    const int64_t dim = lua_isnoneornil(L, 3) ? -1 : check_dim(L, 3, x.dim(), "diff");
    push_tensor(L, x.diff(n, dim));
    return 1;
  });
}

// Dimensions as one number or a list of them, 1-based.
std::vector<int64_t> dims_argument(lua_State* L, int index, int64_t rank, const char* function) {
  std::vector<int64_t> dims;
  for (const int64_t d : integer_list(L, index, std::string(function) + ": dims"))
    dims.push_back(to_dim(d, rank, function));
  return dims;
}

// x:roll(shifts[, dims]): shifts a number or a list; without dims the tensor is flattened
int m_roll(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "roll");
    const auto shifts = integer_list(L, 2, "roll: shifts");
    const auto dims =
        lua_isnoneornil(L, 3) ? std::vector<int64_t>{} : dims_argument(L, 3, x.dim(), "roll");
    push_tensor(L, x.roll(shifts, dims));
    return 1;
  });
}

int m_flip(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "flip");
    push_tensor(L, x.flip(dims_argument(L, 2, x.dim(), "flip")));
    return 1;
  });
}

int m_swapaxes(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "swapaxes");
    push_tensor(
        L, x.transpose(check_dim(L, 2, x.dim(), "swapaxes"), check_dim(L, 3, x.dim(), "swapaxes")));
    return 1;
  });
}

int m_movedim(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "movedim");
    push_tensor(L, x.movedim(dims_argument(L, 2, x.dim(), "movedim"),
                             dims_argument(L, 3, x.dim(), "movedim")));
    return 1;
  });
}

// x:nonzero(): an N x rank tensor of the 1-based positions of x's non-zero elements
int m_nonzero(lua_State* L) {
  return guarded(L, [&] {
    push_tensor(L, self(L, "nonzero").nonzero() + 1);
    return 1;
  });
}

// torch.meshgrid(a, b, ...[, {indexing = 'ij'}]) or torch.meshgrid({a, b, ...}[, opts]): one
// grid per input, as several return values
int t_meshgrid(lua_State* L) {
  return guarded(L, [&] {
    std::vector<Tensor> inputs;
    int options = 2;
    if (lua_istable(L, 1) && !test_tensor(L, 1)) {
      inputs = tensor_list(L, 1, "torch.meshgrid");
    } else {
      int i = 1;
      for (; test_tensor(L, i); ++i) inputs.push_back(*test_tensor(L, i));
      options = i;
      if (inputs.empty()) throw ArgumentError("torch.meshgrid: give the tensors");
    }
    Options o(L, options, "torch.meshgrid", {"indexing"});
    const std::string indexing = o.string("indexing", "ij");
    if (indexing != "ij" && indexing != "xy")
      throw ArgumentError("torch.meshgrid: indexing must be 'ij' or 'xy'");
    auto grids = torch::meshgrid(inputs, indexing);
    for (auto& g : grids) push_tensor(L, g);
    return static_cast<int>(grids.size());
  });
}

const Binding kRearrangeMethods[] = {
    {"tril", m_tril},
    {"triu", m_triu},
    {"diag", m_diag},
    {"diff", m_diff},
    {"roll", m_roll},
    {"flip", m_flip},
    {"swapaxes", m_swapaxes},
    {"swapdims", m_swapaxes},
    {"movedim", m_movedim},
    {"nonzero", m_nonzero, "", "the positions are 1-based, as every index in Lua"},
    {nullptr, nullptr}};
const luaL_Reg kRearrangeMeta[] = {{nullptr, nullptr}};
const Binding kRearrangeFunctions[] = {
    {"meshgrid", t_meshgrid, "",
     "the grids are several return values; indexing defaults to 'ij' (PyTorch 1.13 warns "
     "without it)"},
    {nullptr, nullptr}};

}  // namespace

TorchTables rearrange_tables() {
  return {kRearrangeMethods, kRearrangeMeta, kRearrangeFunctions};
}

}  // namespace engine::lua
