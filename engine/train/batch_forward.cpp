#include "engine/train/batch_forward.hpp"

#include "engine/core/errors.hpp"

namespace engine::train {

torch::Tensor forward_batch(const nn::Model& model, const data::Batch& batch,
                            const torch::Device& device) {
  if (!batch.named()) return model.forward(batch.input.to(device));
  auto inputs = batch.named_inputs();
  if (!model.forward_named) {
    std::string names;
    for (const auto& [name, tensor] : inputs) names += (names.empty() ? "" : ", ") + name;
    throw core::ScriptError(
        "the batches hold several inputs (" + names + ") but the model" +
        (model.name.empty() ? "" : " (" + model.name + ")") +
        " takes one tensor: write it as a Lua module (nn.Module:extend) whose forward takes "
        "them as one table, forward(inputs) with inputs.input, inputs." +
        (names.find("categorical") != std::string::npos ? "categorical" : inputs.rbegin()->first) +
        "..., or hand them to it in a train_batch / evaluate_batch hook");
  }
  for (auto& [name, tensor] : inputs) tensor = tensor.to(device);
  return model.forward_named(inputs);
}

}  // namespace engine::train
