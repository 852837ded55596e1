// Built-in layers whose libtorch form differs from what users of the Lua API expect:
// embeddings take 1-based indices (the Lua convention), and attention layers take PyTorch's
// batch_first option, which libtorch 1.13's C++ modules lack. Parameter names are libtorch's,
// which are PyTorch's.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/functional/upsampling.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/transformerlayer.h>

namespace engine::nn {

// PyTorch's boolean attention masks (true: do not attend) as the additive float masks of `dtype`
// libtorch 1.13's C++ attention expects; any other mask as it is.
torch::Tensor additive_mask(const torch::Tensor& mask, torch::ScalarType dtype);

// Indices 1..num_embeddings.
class OneBasedEmbeddingImpl : public torch::nn::EmbeddingImpl {
 public:
  using torch::nn::EmbeddingImpl::EmbeddingImpl;
  torch::Tensor forward(const torch::Tensor& indices);
};

// Indices 1..num_embeddings; offsets are the 1-based positions where each bag starts.
class OneBasedEmbeddingBagImpl : public torch::nn::EmbeddingBagImpl {
 public:
  using torch::nn::EmbeddingBagImpl::EmbeddingBagImpl;
  torch::Tensor forward(const torch::Tensor& indices, const torch::Tensor& offsets = {},
                        const torch::Tensor& per_sample_weights = {});
};

// A parameterless element-wise layer libtorch 1.13 has no module for (Hardswish, Hardsigmoid):
// PyTorch's name, and the ATen function it applies.
class ElementwiseImpl : public torch::nn::Cloneable<ElementwiseImpl> {
 public:
  using Function = torch::Tensor (*)(const torch::Tensor&);
  // (Module's name is left to its default: libtorch 1.13's Cloneable derives from Module
  // virtually, later ones directly, and only the default constructor suits both)
  ElementwiseImpl(std::string name, Function function)
      : name_(std::move(name)), function_(function) {}
  void reset() override {}
  torch::Tensor forward(const torch::Tensor& input) { return function_(input); }
  void pretty_print(std::ostream& stream) const override { stream << name_ << "()"; }

 private:
  std::string name_;
  Function function_;
};

// PyTorch's nn.Upsample: a size or scale factor given once (a number for every spatial
// dimension, or a list), applied to inputs of any spatial rank as F.interpolate does; libtorch
// 1.13's Upsample needs the rank at construction.
class UpsampleImpl : public torch::nn::Cloneable<UpsampleImpl> {
 public:
  UpsampleImpl(std::vector<int64_t> size, std::vector<double> scale_factor,
               torch::nn::functional::InterpolateFuncOptions::mode_t mode,
               c10::optional<bool> align_corners);
  void reset() override {}
  torch::Tensor forward(const torch::Tensor& input);
  void pretty_print(std::ostream& stream) const override;

 private:
  std::vector<int64_t> size_;
  std::vector<double> scale_factor_;
  torch::nn::functional::InterpolateFuncOptions::mode_t mode_;
  c10::optional<bool> align_corners_;
};

// Channel dropout as PyTorch 1.13 does it: Dropout2d drops the channels of dimension 2 of the
// input as it comes (elements of an [N, C] input, with a warning, as PyTorch), where libtorch
// 1.13 adds a batch dimension to any input that is not 4-D and so drops whole samples; Dropout1d
// (which libtorch 1.13 lacks) takes [N, C, L] or an unbatched [C, L]; Dropout3d adds the batch
// dimension to inputs that are not 5-D, as both do.
class Dropout1dImpl : public torch::nn::Dropout2dImpl {
 public:
  using torch::nn::Dropout2dImpl::Dropout2dImpl;
  torch::Tensor forward(torch::Tensor input);
  void pretty_print(std::ostream& stream) const override;
};
class Dropout2dImpl : public torch::nn::Dropout2dImpl {
 public:
  using torch::nn::Dropout2dImpl::Dropout2dImpl;
  torch::Tensor forward(torch::Tensor input);
};

class MultiheadAttentionImpl : public torch::nn::MultiheadAttentionImpl {
 public:
  MultiheadAttentionImpl(const torch::nn::MultiheadAttentionOptions& options, bool batch_first)
      : torch::nn::MultiheadAttentionImpl(options), batch_first_(batch_first) {}
  // Returns the output and the attention weights averaged over heads (undefined when not
  // needed). Masks follow PyTorch: true (or -inf) marks positions not to attend to.
  std::tuple<torch::Tensor, torch::Tensor> forward(const torch::Tensor& query,
                                                   const torch::Tensor& key,
                                                   const torch::Tensor& value,
                                                   const torch::Tensor& key_padding_mask = {},
                                                   bool need_weights = true,
                                                   const torch::Tensor& attn_mask = {});

 private:
  bool batch_first_;
};

class TransformerEncoderLayerImpl : public torch::nn::TransformerEncoderLayerImpl {
 public:
  TransformerEncoderLayerImpl(const torch::nn::TransformerEncoderLayerOptions& options,
                              bool batch_first)
      : torch::nn::TransformerEncoderLayerImpl(options), batch_first_(batch_first) {}
  bool batch_first() const { return batch_first_; }
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& src_mask = {},
                        const torch::Tensor& src_key_padding_mask = {});

 private:
  bool batch_first_;
};

}  // namespace engine::nn
