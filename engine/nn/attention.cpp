#include "engine/nn/attention.hpp"

#include "engine/nn/layers.hpp"

#include <cmath>
#include <limits>
#include <variant>

namespace engine::nn {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// Python's _in_projection_packed: one product when query, key and value are one tensor, two when
// key and value are, three otherwise.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> in_projection(
    const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool q_is_k,
    bool k_is_v, const torch::Tensor& w, const torch::Tensor& b) {
  const int64_t e = q.size(-1);
  if (k_is_v && q_is_k) {
    auto chunks = torch::linear(q, w, b).chunk(3, -1);
    return {chunks[0], chunks[1], chunks[2]};
  }
  if (k_is_v) {
    auto w_parts = w.split_with_sizes({e, 2 * e});
    torch::Tensor b_q, b_kv;
    if (b.defined()) {
      auto b_parts = b.split_with_sizes({e, 2 * e});
      b_q = b_parts[0];
      b_kv = b_parts[1];
    }
    auto kv = torch::linear(k, w_parts[1], b_kv).chunk(2, -1);
    return {torch::linear(q, w_parts[0], b_q), kv[0], kv[1]};
  }
  auto w_parts = w.chunk(3);
  std::vector<torch::Tensor> b_parts(3);
  if (b.defined()) b_parts = b.chunk(3);
  return {torch::linear(q, w_parts[0], b_parts[0]), torch::linear(k, w_parts[1], b_parts[1]),
          torch::linear(v, w_parts[2], b_parts[2])};
}

torch::Tensor activation(const torch::nn::activation_t& kind, const torch::Tensor& x) {
  using std::get_if;  // c10's variant on libtorch 1.13 (found by ADL), std's on later ones
  if (get_if<torch::enumtype::kGELU>(&kind)) return torch::gelu(x);
  if (const auto* f = get_if<std::function<torch::Tensor(const torch::Tensor&)>>(&kind)) {
    return (*f)(x);
  }
  return torch::relu(x);
}

torch::Tensor norm(torch::nn::AnyModule& module, const torch::Tensor& x) {
  return module.is_empty() ? x : module.forward<torch::Tensor>(x);
}

}  // namespace

std::tuple<torch::Tensor, torch::Tensor> attention_forward(
    torch::nn::MultiheadAttentionImpl& attention, const torch::Tensor& query,
    const torch::Tensor& key, const torch::Tensor& value, const torch::Tensor& key_padding_mask,
    bool need_weights, const torch::Tensor& attn_mask, bool average_weights) {
  const auto& options = attention.options;
  // What Python's version adds beyond the common case goes to libtorch's own
  if (!attention._qkv_same_embed_dim || attention.bias_k.defined() || options.add_zero_attn()) {
    return attention.forward(query, key, value, key_padding_mask, need_weights,
                             additive_mask(attn_mask, query.scalar_type()), average_weights);
  }
  const bool q_is_k = query.is_same(key), k_is_v = key.is_same(value);
  const bool batched = query.dim() == 3;
  auto q_in = batched ? query : query.unsqueeze(1);
  auto k_in = batched ? key : key.unsqueeze(1);
  auto v_in = batched ? value : value.unsqueeze(1);
  auto padding =
      (batched || !key_padding_mask.defined()) ? key_padding_mask : key_padding_mask.unsqueeze(0);
  const int64_t tgt_len = q_in.size(0), bsz = q_in.size(1), embed_dim = q_in.size(2);
  const int64_t heads = options.num_heads(), head_dim = embed_dim / heads;

  auto [q, k, v] = in_projection(q_in, k_in, v_in, q_is_k, k_is_v, attention.in_proj_weight,
                                 attention.in_proj_bias);
  torch::Tensor mask = attn_mask;
  if (mask.defined() && mask.dim() == 2) mask = mask.unsqueeze(0);
  q = q.contiguous().view({tgt_len, bsz * heads, head_dim}).transpose(0, 1);
  k = k.contiguous().view({k.size(0), bsz * heads, head_dim}).transpose(0, 1);
  v = v.contiguous().view({v.size(0), bsz * heads, head_dim}).transpose(0, 1);
  const int64_t src_len = k.size(1);
  if (padding.defined()) {
    auto expanded = padding.view({bsz, 1, 1, src_len})
                        .expand({-1, heads, -1, -1})
                        .reshape({bsz * heads, 1, src_len});
    if (!expanded.is_floating_point()) expanded = expanded.to(torch::kBool);
    if (!mask.defined()) {
      mask = expanded;
    } else if (mask.scalar_type() == torch::kBool) {
      mask = mask.logical_or(expanded);
    } else if (expanded.scalar_type() == torch::kBool) {
      mask = mask.masked_fill(expanded, kMinusInfinity);
    } else {
      mask = mask + expanded;
    }
  }
  if (mask.defined() && mask.scalar_type() == torch::kBool) {
    mask = torch::zeros_like(mask, q.options()).masked_fill_(mask, kMinusInfinity);
  }
  const double dropout_p = attention.is_training() ? options.dropout() : 0.0;
  auto q_scaled = q / std::sqrt(static_cast<double>(q.size(2)));
  auto weights = mask.defined() ? torch::baddbmm(mask, q_scaled, k.transpose(-2, -1))
                                : torch::bmm(q_scaled, k.transpose(-2, -1));
  weights = torch::softmax(weights, -1);
  if (dropout_p > 0.0) weights = torch::dropout(weights, dropout_p, /*train=*/true);
  auto out = torch::bmm(weights, v);
  out = out.transpose(0, 1).contiguous().view({tgt_len * bsz, embed_dim});
  out = torch::linear(out, attention.out_proj->weight, attention.out_proj->bias);
  out = out.view({tgt_len, bsz, out.size(1)});
  if (!batched) out = out.squeeze(1);
  if (!need_weights) return {out, torch::Tensor()};
  weights = weights.view({bsz, heads, tgt_len, src_len});
  if (average_weights) weights = weights.sum(1) / heads;
  if (!batched) weights = weights.squeeze(0);
  return {out, weights};
}

torch::Tensor encoder_layer_forward(torch::nn::TransformerEncoderLayerImpl& layer,
                                    const torch::Tensor& src, const torch::Tensor& mask,
                                    const torch::Tensor& key_padding_mask) {
  // x = norm1(x + _sa_block(x)); x = norm2(x + _ff_block(x))  (norm_first = False)
  auto attended = std::get<0>(
      attention_forward(*layer.self_attn, src, src, src, key_padding_mask, false, mask));
  auto x = layer.norm1(src + layer.dropout1(attended));
  auto fed = layer.linear2(layer.dropout(activation(layer.options.activation(), layer.linear1(x))));
  return layer.norm2(x + layer.dropout2(fed));
}

torch::Tensor decoder_layer_forward(torch::nn::TransformerDecoderLayerImpl& layer,
                                    const torch::Tensor& tgt, const torch::Tensor& memory,
                                    const torch::Tensor& tgt_mask, const torch::Tensor& memory_mask,
                                    const torch::Tensor& tgt_key_padding_mask,
                                    const torch::Tensor& memory_key_padding_mask) {
  auto attended = std::get<0>(
      attention_forward(*layer.self_attn, tgt, tgt, tgt, tgt_key_padding_mask, false, tgt_mask));
  auto x = layer.norm1(tgt + layer.dropout1(attended));
  auto crossed = std::get<0>(attention_forward(*layer.multihead_attn, x, memory, memory,
                                               memory_key_padding_mask, false, memory_mask));
  x = layer.norm2(x + layer.dropout2(crossed));
  auto fed = layer.linear2(layer.dropout(activation(layer.options.activation(), layer.linear1(x))));
  return layer.norm3(x + layer.dropout3(fed));
}

torch::Tensor encoder_stack_forward(torch::nn::TransformerEncoderImpl& encoder,
                                    const torch::Tensor& src, const torch::Tensor& mask,
                                    const torch::Tensor& key_padding_mask) {
  auto x = src;
  for (const auto& layer : *encoder.layers) {
    x = encoder_layer_forward(*layer->as<torch::nn::TransformerEncoderLayerImpl>(), x, mask,
                              key_padding_mask);
  }
  return norm(encoder.norm, x);
}

torch::Tensor decoder_stack_forward(torch::nn::TransformerDecoderImpl& decoder,
                                    const torch::Tensor& tgt, const torch::Tensor& memory,
                                    const torch::Tensor& tgt_mask, const torch::Tensor& memory_mask,
                                    const torch::Tensor& tgt_key_padding_mask,
                                    const torch::Tensor& memory_key_padding_mask) {
  auto x = tgt;
  for (const auto& layer : *decoder.layers) {
    x = decoder_layer_forward(*layer->as<torch::nn::TransformerDecoderLayerImpl>(), x, memory,
                              tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  }
  return norm(decoder.norm, x);
}

}  // namespace engine::nn
