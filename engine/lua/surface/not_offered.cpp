#include "engine/lua/surface/not_offered.hpp"

#include <algorithm>

namespace engine::lua {

const std::vector<std::pair<std::string, std::string>>& not_offered() {
  static const std::vector<std::pair<std::string, std::string>> names = [] {
    std::vector<std::pair<std::string, std::string>> out = {
        {"torch.nn.DataParallel",
         "the engine trains data-parallel with engine train --nproc (docs/distributed.md)"},
        {"torch.nn.parallel.DistributedDataParallel",
         "the engine trains data-parallel with engine train --nproc (docs/distributed.md)"},
        {"torch.Tensor.numpy", "Lua has no NumPy: x:totable() gives Lua numbers"},
        {"torch.from_numpy", "Lua has no NumPy: torch.tensor(table) builds a tensor"},
        {"torch.Tensor.share_memory_", "the engine's loader threads share memory already"},
        {"torch.nn.Module.share_memory", "the engine's loader threads share memory already"},
        {"torch.nn.Module.to_empty",
         "modules are built with their memory on their device; the meta device of deferred "
         "initialisation (FSDP's) is not offered"},
        {"torch.optim.Optimizer",
         "a new optimizer is a C++ class in engine/train (docs/architecture.md, 'An "
         "optimizer'); a script's own update is tensor ops under torch.no_grad"},
        {"torch.Tensor.to_sparse", "sparse tensors are not offered: layers and data are dense"},
        {"torch.sparse_coo_tensor", "sparse tensors are not offered: layers and data are dense"},
        {"torch.spmm", "sparse tensors are not offered: layers and data are dense"},
        {"torch.polar", "complex tensors are not offered"},
        {"torch.view_as_complex", "complex tensors are not offered"},
        {"torch.view_as_real", "complex tensors are not offered"},
    };
    std::sort(out.begin(), out.end());
    return out;
  }();
  return names;
}

std::string not_offered_reason(const std::string& pytorch_name) {
  const auto& names = not_offered();
  const auto it =
      std::lower_bound(names.begin(), names.end(), std::make_pair(pytorch_name, std::string()));
  return it != names.end() && it->first == pytorch_name ? it->second : "";
}

}  // namespace engine::lua
