#include "engine/train/batch_forward.hpp"

#include "engine/core/errors.hpp"

namespace engine::train {

namespace {

torch::Tensor on_device(const torch::Tensor& input, const torch::Device& device,
                        const InputLayout& layout) {
  auto moved = input.to(device);
  if (layout.half && moved.is_floating_point()) moved = moved.to(torch::kHalf);
  if (layout.channels_last && moved.dim() == 4) {
    moved = moved.contiguous(torch::MemoryFormat::ChannelsLast);
  }
  return moved;
}

}  // namespace

void to_channels_last(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    if (p.dim() == 4) p.set_data(p.data().contiguous(torch::MemoryFormat::ChannelsLast));
  }
  for (auto& b : module.buffers()) {
    if (b.dim() == 4) b.set_data(b.data().contiguous(torch::MemoryFormat::ChannelsLast));
  }
}

InputLayout input_layout(const TrainerOptions& options) {
  return {options.channels_last, options.precision == Precision::kFloat16Master};
}

torch::Tensor forward_batch(const nn::Model& model, const data::Batch& batch,
                            const torch::Device& device, const InputLayout& layout) {
  if (!batch.named()) return model.forward(on_device(batch.input, device, layout));
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
  for (auto& [name, tensor] : inputs) tensor = on_device(tensor, device, layout);
  return model.forward_named(inputs);
}

}  // namespace engine::train
