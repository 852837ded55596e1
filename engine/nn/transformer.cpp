#include "engine/nn/transformer.hpp"

#include "engine/nn/layers.hpp"

namespace engine::nn {
namespace {

// Seq-first for libtorch, and back.
torch::Tensor in(const torch::Tensor& x, bool batch_first) {
  return batch_first ? x.transpose(0, 1) : x;
}

// A decoder layer's or a decoder's forward (libtorch's `Base`, which both take the same
// arguments) in PyTorch's terms: batch_first and boolean masks.
template <class Base>
torch::Tensor decode(Base& decoder, bool batch_first, const torch::Tensor& tgt,
                     const torch::Tensor& memory, const TransformerMasks& masks) {
  const auto dtype = tgt.scalar_type();
  return in(
      decoder.Base::forward(in(tgt, batch_first), in(memory, batch_first),
                            additive_mask(masks.tgt, dtype), additive_mask(masks.memory, dtype),
                            masks.tgt_key_padding, masks.memory_key_padding),
      batch_first);
}

}  // namespace

torch::Tensor encoder_forward(torch::nn::TransformerEncoderImpl& encoder, const torch::Tensor& src,
                              const TransformerMasks& masks) {
  return encoder.torch::nn::TransformerEncoderImpl::forward(
      src, additive_mask(masks.src, src.scalar_type()), masks.src_key_padding);
}

torch::Tensor TransformerEncoderImpl::forward(const torch::Tensor& src,
                                              const TransformerMasks& masks) {
  return in(encoder_forward(*this, in(src, batch_first_), masks), batch_first_);
}

torch::Tensor TransformerDecoderLayerImpl::forward(const torch::Tensor& tgt,
                                                   const torch::Tensor& memory,
                                                   const TransformerMasks& masks) {
  return decode<torch::nn::TransformerDecoderLayerImpl>(*this, batch_first_, tgt, memory, masks);
}

torch::Tensor TransformerDecoderImpl::forward(const torch::Tensor& tgt, const torch::Tensor& memory,
                                              const TransformerMasks& masks) {
  return decode<torch::nn::TransformerDecoderImpl>(*this, batch_first_, tgt, memory, masks);
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& src, const torch::Tensor& tgt,
                                       const TransformerMasks& masks) {
  const auto dtype = src.scalar_type();
  return in(torch::nn::TransformerImpl::forward(
                in(src, batch_first_), in(tgt, batch_first_), additive_mask(masks.src, dtype),
                additive_mask(masks.tgt, dtype), additive_mask(masks.memory, dtype),
                masks.src_key_padding, masks.tgt_key_padding, masks.memory_key_padding),
            batch_first_);
}

}  // namespace engine::nn
