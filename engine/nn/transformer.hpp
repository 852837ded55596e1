// PyTorch's transformer stacks over libtorch 1.13's: TransformerEncoder (num_layers copies of one
// encoder layer, its weights copied as PyTorch's deepcopy, and an optional norm),
// TransformerDecoderLayer, TransformerDecoder and Transformer, each with PyTorch's batch_first
// (libtorch's C++ modules lack it), boolean masks (true: do not attend), and PyTorch's forward
// computed op for op (engine/nn/attention.hpp).
#pragma once

#include <torch/nn/modules/transformer.h>
#include <torch/nn/modules/transformercoder.h>
#include <torch/nn/modules/transformerlayer.h>

namespace engine::nn {

// The masks of one call, additive floats or booleans (true: do not attend).
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

// The stacks built as PyTorch builds them. PyTorch's stacks deep-copy their layer, drawing
// nothing from torch's generator; libtorch's clone() re-runs each copy's reset(), which draws a
// whole layer's initialisation per copy (the values are then overwritten). Built through these,
// a seeded script initialises every layer made afterwards, and nn.Transformer's own weights,
// with PyTorch's numbers.
std::shared_ptr<TransformerEncoderImpl> make_transformer_encoder(
    const torch::nn::TransformerEncoderOptions& options, bool batch_first);
std::shared_ptr<TransformerDecoderImpl> make_transformer_decoder(
    const torch::nn::TransformerDecoderOptions& options, bool batch_first);
// PyTorch's nn.Transformer: an encoder layer, its stack and norm, a decoder layer, its stack and
// norm, then Xavier-uniform on every weight of two or more dimensions, in parameter order.
std::shared_ptr<TransformerImpl> make_transformer(const torch::nn::TransformerOptions& options,
                                                  bool batch_first);

// libtorch's own encoder (the one inside a Transformer), seq-first, with boolean masks taken.
torch::Tensor encoder_forward(torch::nn::TransformerEncoderImpl& encoder, const torch::Tensor& src,
                              const TransformerMasks& masks);

}  // namespace engine::nn
