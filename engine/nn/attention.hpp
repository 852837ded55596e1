// PyTorch 1.13's Python forwards of attention and the transformer layers and stacks, op for op,
// on libtorch's modules (their weights and options). libtorch's C++ forwards compute the same
// functions in another order (the query scaled before the heads are split, the mask added after
// the product instead of baddbmm), which changes last bits and, over a training run, the series:
// these make a model ported from PyTorch (pytorch/examples' word language model) train to the same
// numbers. All inputs are sequence-first; masks are additive floats or booleans (true: do not
// attend).
#pragma once

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/transformercoder.h>
#include <torch/nn/modules/transformerlayer.h>

#include <tuple>

namespace engine::nn {

// torch.nn.functional.multi_head_attention_forward through MultiheadAttention.forward:
// query T x N x E (or T x E), key and value S x N x E. Returns the output and, when
// need_weights, the attention weights (averaged over heads when average_weights). A query that
// is the key (and the value) projects once, as Python's identity test does.
std::tuple<torch::Tensor, torch::Tensor> attention_forward(
    torch::nn::MultiheadAttentionImpl& attention, const torch::Tensor& query,
    const torch::Tensor& key, const torch::Tensor& value, const torch::Tensor& key_padding_mask,
    bool need_weights, const torch::Tensor& attn_mask, bool average_weights = true);

torch::Tensor encoder_layer_forward(torch::nn::TransformerEncoderLayerImpl& layer,
                                    const torch::Tensor& src, const torch::Tensor& mask,
                                    const torch::Tensor& key_padding_mask);

torch::Tensor decoder_layer_forward(torch::nn::TransformerDecoderLayerImpl& layer,
                                    const torch::Tensor& tgt, const torch::Tensor& memory,
                                    const torch::Tensor& tgt_mask, const torch::Tensor& memory_mask,
                                    const torch::Tensor& tgt_key_padding_mask,
                                    const torch::Tensor& memory_key_padding_mask);

torch::Tensor encoder_stack_forward(torch::nn::TransformerEncoderImpl& encoder,
                                    const torch::Tensor& src, const torch::Tensor& mask,
                                    const torch::Tensor& key_padding_mask);

torch::Tensor decoder_stack_forward(torch::nn::TransformerDecoderImpl& decoder,
                                    const torch::Tensor& tgt, const torch::Tensor& memory,
                                    const torch::Tensor& tgt_mask, const torch::Tensor& memory_mask,
                                    const torch::Tensor& tgt_key_padding_mask,
                                    const torch::Tensor& memory_key_padding_mask);

}  // namespace engine::nn
