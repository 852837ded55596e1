// nn.Sequential: children named "0", "1", ... as in PyTorch, and a forward that says which
// child rejected its input and with what shape.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/pimpl.h>

#include <vector>

namespace engine::nn {

// Runs one layer and turns a libtorch error into a LayerError naming the layer and the shape.
torch::Tensor forward_layer(torch::nn::AnyModule& layer, const torch::Tensor& input);

class SequentialImpl : public torch::nn::Module {
 public:
  SequentialImpl() = default;
  void push_back(torch::nn::AnyModule layer);
  size_t size() const { return layers_.size(); }
  torch::nn::AnyModule& at(size_t index) { return layers_.at(index); }
  torch::Tensor forward(torch::Tensor input);
  void pretty_print(std::ostream& stream) const override;

 private:
  std::vector<torch::nn::AnyModule> layers_;
};
TORCH_MODULE(Sequential);

}  // namespace engine::nn
