#include "engine/nn/layers.hpp"

#include "engine/nn/attention.hpp"

#include <atomic>
#include <limits>

#include "engine/core/errors.hpp"
#include "engine/core/log.hpp"
#include "engine/nn/positions.hpp"

namespace engine::nn {
namespace {

// PyTorch warns once per call site; a layer called every step warns once per process here.
void warn_once(std::atomic<bool>& warned, const std::string& text) {
  if (!warned.exchange(true)) core::log::warn("{}", text);
}

std::atomic<bool> dropout2d_rank_warned{false};

}  // namespace

torch::Tensor additive_mask(const torch::Tensor& mask, torch::ScalarType dtype) {
  if (!mask.defined() || mask.scalar_type() != torch::kBool) return mask;
  return torch::zeros(mask.sizes(), mask.options().dtype(dtype))
      .masked_fill_(mask, -std::numeric_limits<double>::infinity());
}

UpsampleImpl::UpsampleImpl(std::vector<int64_t> size, std::vector<double> scale_factor,
                           torch::nn::functional::InterpolateFuncOptions::mode_t mode,
                           c10::optional<bool> align_corners)
    : size_(std::move(size)),
      scale_factor_(std::move(scale_factor)),
      mode_(mode),
      align_corners_(align_corners) {}

torch::Tensor UpsampleImpl::forward(const torch::Tensor& input) {
  const size_t spatial = static_cast<size_t>(std::max<int64_t>(input.dim() - 2, 1));
  torch::nn::functional::InterpolateFuncOptions options;
  if (!size_.empty()) {
    options.size(size_.size() == 1 ? std::vector<int64_t>(spatial, size_[0]) : size_);
  } else {
    options.scale_factor(scale_factor_.size() == 1 ? std::vector<double>(spatial, scale_factor_[0])
                                                   : scale_factor_);
  }
  options.mode(mode_);
  if (align_corners_) options.align_corners(*align_corners_);
  return torch::nn::functional::interpolate(input, options);
}

void UpsampleImpl::pretty_print(std::ostream& stream) const {
  stream << "Upsample(";
  if (!size_.empty()) {
    stream << "size=" << c10::IntArrayRef(size_);
  } else {
    stream << "scale_factor=" << c10::ArrayRef<double>(scale_factor_);
  }
  stream << ", mode=" << torch::enumtype::get_enum_name(mode_) << ")";
}

torch::Tensor Dropout1dImpl::forward(torch::Tensor input) {
  const int64_t rank = input.dim();
  if (rank != 2 && rank != 3) {
    throw core::UsageError("Dropout1d expects a 2-D or 3-D input ([C, L] or [N, C, L]), got " +
                           std::to_string(rank) + "-D");
  }
  const bool batched = rank == 3;
  auto x = batched ? input : input.unsqueeze(0);
  auto out = options.inplace() ? torch::feature_dropout_(x, options.p(), is_training())
                               : torch::feature_dropout(x, options.p(), is_training());
  return batched ? out : out.squeeze(0);
}

void Dropout1dImpl::pretty_print(std::ostream& stream) const {
  stream << "Dropout1d(p=" << options.p() << ", inplace=" << std::boolalpha << options.inplace()
         << ")";
}

torch::Tensor Dropout2dImpl::forward(torch::Tensor input) {
  const int64_t rank = input.dim();
  if (rank != 3 && rank != 4) {
    warn_once(dropout2d_rank_warned,
              "Dropout2d got a " + std::to_string(rank) +
                  "-D input: as PyTorch 1.13, it drops what dimension 2 holds, for each sample "
                  "(single elements of an [N, C] input); it is meant for [N, C, H, W] (use "
                  "nn.Dropout for elements)");
  }
  return options.inplace() ? torch::feature_dropout_(input, options.p(), is_training())
                           : torch::feature_dropout(input, options.p(), is_training());
}

torch::Tensor OneBasedEmbeddingImpl::forward(const torch::Tensor& indices) {
  return torch::nn::EmbeddingImpl::forward(
      zero_based(indices, options.num_embeddings(), "Embedding"));
}

torch::Tensor OneBasedEmbeddingBagImpl::forward(const torch::Tensor& indices,
                                                const torch::Tensor& offsets,
                                                const torch::Tensor& per_sample_weights) {
  torch::Tensor zero_based_offsets;
  if (offsets.defined()) {
    zero_based_offsets =
        zero_based(offsets, std::max<int64_t>(indices.numel(), 1), "EmbeddingBag offsets");
  }
  return torch::nn::EmbeddingBagImpl::forward(
      zero_based(indices, options.num_embeddings(), "EmbeddingBag"), zero_based_offsets,
      per_sample_weights);
}

std::tuple<torch::Tensor, torch::Tensor> MultiheadAttentionImpl::forward(
    const torch::Tensor& query, const torch::Tensor& key, const torch::Tensor& value,
    const torch::Tensor& key_padding_mask, bool need_weights, const torch::Tensor& attn_mask) {
  if (!batch_first_) {
    return attention_forward(*this, query, key, value, key_padding_mask, need_weights, attn_mask);
  }
  // batch first: transposed keeping which of them are one tensor, as PyTorch's forward does
  const auto q = query.transpose(0, 1);
  const auto k = key.is_same(query) ? q : key.transpose(0, 1);
  const auto v = value.is_same(key) ? k : value.transpose(0, 1);
  auto [out, weights] =
      attention_forward(*this, q, k, v, key_padding_mask, need_weights, attn_mask);
  return {out.transpose(0, 1), weights};
}

torch::Tensor TransformerEncoderLayerImpl::forward(const torch::Tensor& src,
                                                   const torch::Tensor& src_mask,
                                                   const torch::Tensor& src_key_padding_mask) {
  if (!batch_first_) return encoder_layer_forward(*this, src, src_mask, src_key_padding_mask);
  return encoder_layer_forward(*this, src.transpose(0, 1), src_mask, src_key_padding_mask)
      .transpose(0, 1);
}

}  // namespace engine::nn
