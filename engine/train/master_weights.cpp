#include "engine/train/master_weights.hpp"

#include "engine/core/errors.hpp"

namespace engine::train {
namespace {

bool is_batchnorm(const torch::nn::Module& module) {
  return module.name().find("BatchNorm") != std::string::npos;
}

}  // namespace

std::vector<std::pair<torch::Tensor, torch::Tensor>> to_low_precision(torch::nn::Module& module,
                                                                      torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> converted;
  for (const auto& child : module.modules(/*include_self=*/true)) {
    if (is_batchnorm(*child)) continue;
    for (auto& p : child->parameters(/*recurse=*/false)) {
      if (!p.is_floating_point() || p.scalar_type() == dtype) continue;
      auto master = p.detach().to(torch::kFloat32).clone();
      p.set_data(p.data().to(dtype));
      converted.emplace_back(p, master);
    }
    for (auto& b : child->buffers(/*recurse=*/false)) {
      if (b.is_floating_point()) b.set_data(b.data().to(dtype));
    }
  }
  return converted;
}

MasterWeights::MasterWeights(torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                             torch::ScalarType dtype)
    : optimizer_(optimizer) {
  if (!optimizer.state().empty()) {
    throw core::UsageError("float16 with master weights must be set up before the first step");
  }
  pairs_ = to_low_precision(module, dtype);
  for (auto& [model, master] : pairs_) master.requires_grad_(model.requires_grad());
  for (auto& group : optimizer_.param_groups()) {
    for (auto& p : group.params()) {
      for (const auto& [model, master] : pairs_) {
        if (p.is_same(model)) {
          p = master;
          break;
        }
      }
    }
  }
}

void MasterWeights::gradients_to_masters() {
  for (auto& [model, master] : pairs_) {
    const auto& grad = model.grad();
    master.mutable_grad() = grad.defined() ? grad.to(torch::kFloat32) : torch::Tensor();
  }
}

void MasterWeights::masters_to_model() {
  torch::NoGradGuard no_grad;
  for (auto& [model, master] : pairs_) model.copy_(master);
}

void MasterWeights::release_model_gradients() {
  for (auto& [model, master] : pairs_) model.mutable_grad().reset();
}

std::vector<torch::Tensor> MasterWeights::optimizer_parameters() const {
  std::vector<torch::Tensor> params;
  for (auto& group : optimizer_.param_groups()) {
    for (const auto& p : group.params()) params.push_back(p);
  }
  return params;
}

}  // namespace engine::train
