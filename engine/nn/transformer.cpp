#include "engine/nn/transformer.hpp"

#include <limits>

namespace engine::nn {
namespace {

torch::Tensor additive(const torch::Tensor& mask, torch::ScalarType dtype) {
  if (!mask.defined() || mask.scalar_type() != torch::kBool) return mask;
  return torch::zeros(mask.sizes(), mask.options().dtype(dtype))
      .masked_fill_(mask, -std::numeric_limits<double>::infinity());
}

// Seq-first for libtorch, and back.
torch::Tensor in(const torch::Tensor& x, bool batch_first) {
  return batch_first ? x.transpose(0, 1) : x;
}

}  // namespace

torch::Tensor encoder_forward(torch::nn::TransformerEncoderImpl& encoder, const torch::Tensor& src,
                              const TransformerMasks& masks) {
  return encoder.torch::nn::TransformerEncoderImpl::forward(
      src, additive(masks.src, src.scalar_type()), masks.src_key_padding);
}

torch::Tensor TransformerEncoderImpl::forward(const torch::Tensor& src,
                                              const TransformerMasks& masks) {
  return in(encoder_forward(*this, in(src, batch_first_), masks), batch_first_);
}

torch::Tensor TransformerDecoderLayerImpl::forward(const torch::Tensor& tgt,
                                                   const torch::Tensor& memory,
                                                   const TransformerMasks& masks) {
  const auto dtype = tgt.scalar_type();
  return in(torch::nn::TransformerDecoderLayerImpl::forward(
                in(tgt, batch_first_), in(memory, batch_first_), additive(masks.tgt, dtype),
                additive(masks.memory, dtype), masks.tgt_key_padding, masks.memory_key_padding),
            batch_first_);
}

torch::Tensor TransformerDecoderImpl::forward(const torch::Tensor& tgt, const torch::Tensor& memory,
                                              const TransformerMasks& masks) {
  const auto dtype = tgt.scalar_type();
  return in(torch::nn::TransformerDecoderImpl::forward(
                in(tgt, batch_first_), in(memory, batch_first_), additive(masks.tgt, dtype),
                additive(masks.memory, dtype), masks.tgt_key_padding, masks.memory_key_padding),
            batch_first_);
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& src, const torch::Tensor& tgt,
                                       const TransformerMasks& masks) {
  const auto dtype = src.scalar_type();
  return in(torch::nn::TransformerImpl::forward(
                in(src, batch_first_), in(tgt, batch_first_), additive(masks.src, dtype),
                additive(masks.tgt, dtype), additive(masks.memory, dtype), masks.src_key_padding,
                masks.tgt_key_padding, masks.memory_key_padding),
            batch_first_);
}

}  // namespace engine::nn
