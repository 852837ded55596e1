// PyTorch's transformer stacks over libtorch 1.13's: TransformerEncoder (num_layers copies of one
// encoder layer, its weights copied as PyTorch's deepcopy, and an optional norm),
// TransformerDecoderLayer, TransformerDecoder and Transformer, each with PyTorch's batch_first
// (libtorch's C++ modules lack it) and boolean masks (true: do not attend), which libtorch's
// attention takes as additive float masks only.
#pragma once

#include <torch/nn/modules/transformer.h>
#include <torch/nn/modules/transformercoder.h>
#include <torch/nn/modules/transformerlayer.h>

namespace engine::nn {

// The masks of one call: a boolean one becomes an additive float mask of `dtype`.
struct TransformerMasks {
  torch::Tensor src, tgt, memory;
  torch::Tensor src_key_padding, tgt_key_padding, memory_key_padding;
};

class TransformerEncoderImpl : public torch::nn::TransformerEncoderImpl {
 public:
  TransformerEncoderImpl(const torch::nn::TransformerEncoderOptions& options, bool batch_first)
      : torch::nn::TransformerEncoderImpl(options), batch_first_(batch_first) {}
  torch::Tensor forward(const torch::Tensor& src, const TransformerMasks& masks = {});

 private:
  bool batch_first_;
};

class TransformerDecoderLayerImpl : public torch::nn::TransformerDecoderLayerImpl {
 public:
  TransformerDecoderLayerImpl(const torch::nn::TransformerDecoderLayerOptions& options,
                              bool batch_first)
      : torch::nn::TransformerDecoderLayerImpl(options), batch_first_(batch_first) {}
  torch::Tensor forward(const torch::Tensor& tgt, const torch::Tensor& memory,
                        const TransformerMasks& masks = {});
  bool batch_first() const { return batch_first_; }

 private:
  bool batch_first_;
};

class TransformerDecoderImpl : public torch::nn::TransformerDecoderImpl {
 public:
  TransformerDecoderImpl(const torch::nn::TransformerDecoderOptions& options, bool batch_first)
      : torch::nn::TransformerDecoderImpl(options), batch_first_(batch_first) {}
  torch::Tensor forward(const torch::Tensor& tgt, const torch::Tensor& memory,
                        const TransformerMasks& masks = {});

 private:
  bool batch_first_;
};

class TransformerImpl : public torch::nn::TransformerImpl {
 public:
  TransformerImpl(const torch::nn::TransformerOptions& options, bool batch_first)
      : torch::nn::TransformerImpl(options), batch_first_(batch_first) {}
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& tgt,
                        const TransformerMasks& masks = {});

 private:
  bool batch_first_;
};

// libtorch's own encoder (the one inside a Transformer), seq-first, with boolean masks taken.
torch::Tensor encoder_forward(torch::nn::TransformerEncoderImpl& encoder, const torch::Tensor& src,
                              const TransformerMasks& masks);

}  // namespace engine::nn
