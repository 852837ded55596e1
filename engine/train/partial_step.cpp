#include "engine/train/partial_step.hpp"

#include <algorithm>
#include <utility>

namespace engine::train {

void step_only(std::vector<torch::optim::OptimizerParamGroup>& groups,
               const std::vector<torch::Tensor>& only, const std::function<void()>& step) {
  if (only.empty()) return;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> hidden;
  for (auto& group : groups) {
    for (auto& p : group.params()) {
      const bool stepped = std::any_of(only.begin(), only.end(),
                                       [&](const torch::Tensor& o) { return o.is_same(p); });
      if (!stepped && p.grad().defined()) hidden.emplace_back(p, p.grad());
    }
  }
  struct GiveBack {
    std::vector<std::pair<torch::Tensor, torch::Tensor>>& hidden;
    ~GiveBack() {
      for (auto& [p, grad] : hidden) p.mutable_grad() = grad;
    }
  } give_back{hidden};
  for (auto& [p, grad] : hidden) p.mutable_grad().reset();
  step();
}

}  // namespace engine::train
