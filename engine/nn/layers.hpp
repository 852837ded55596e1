// Built-in layers whose libtorch form differs from what users of the Lua API expect:
// embeddings take 1-based indices (the Lua convention), and attention layers take PyTorch's
// batch_first option, which libtorch 1.13's C++ modules lack. Parameter names are libtorch's,
// which are PyTorch's.
#pragma once

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/transformerlayer.h>

namespace engine::nn {

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
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& src_mask = {},
                        const torch::Tensor& src_key_padding_mask = {});

 private:
  bool batch_first_;
};

}  // namespace engine::nn
