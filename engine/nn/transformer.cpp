#include "engine/nn/transformer.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/normalization.h>

#include "engine/nn/attention.hpp"
#include "engine/nn/layers.hpp"

namespace engine::nn {
namespace {

// Leaves torch's CPU generator as it was found, whatever the scope draws.
class GeneratorUntouched {
 public:
  GeneratorUntouched() : generator_(at::detail::getDefaultCPUGenerator()) {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    state_ = generator_.get_state();
  }
  ~GeneratorUntouched() {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    generator_.set_state(state_);
  }
  GeneratorUntouched(const GeneratorUntouched&) = delete;
  GeneratorUntouched& operator=(const GeneratorUntouched&) = delete;

 private:
  at::Generator generator_;
  at::Tensor state_;
};

// A module of type M built from args with the generator left as it was.
template <class M, class... Args>
std::shared_ptr<M> drawing_nothing(Args&&... args) {
  GeneratorUntouched untouched;
  return std::make_shared<M>(std::forward<Args>(args)...);
}

torch::nn::AnyModule layer_norm(int64_t d_model) {
  return torch::nn::AnyModule(torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model})));
}

// Seq-first for libtorch, and back.
torch::Tensor in(const torch::Tensor& x, bool batch_first) {
  return batch_first ? x.transpose(0, 1) : x;
}

}  // namespace

std::shared_ptr<TransformerEncoderImpl> make_transformer_encoder(
    const torch::nn::TransformerEncoderOptions& options, bool batch_first) {
  return drawing_nothing<TransformerEncoderImpl>(options, batch_first);
}

std::shared_ptr<TransformerDecoderImpl> make_transformer_decoder(
    const torch::nn::TransformerDecoderOptions& options, bool batch_first) {
  return drawing_nothing<TransformerDecoderImpl>(options, batch_first);
}

std::shared_ptr<TransformerImpl> make_transformer(const torch::nn::TransformerOptions& options,
                                                  bool batch_first) {
  namespace tnn = torch::nn;
  const auto d = options.d_model();
  tnn::TransformerEncoderLayer encoder_layer(tnn::TransformerEncoderLayerOptions(d, options.nhead())
                                                 .dim_feedforward(options.dim_feedforward())
                                                 .dropout(options.dropout())
                                                 .activation(options.activation()));
  // libtorch's own stacks (seq-first, called by the Transformer's forward)
  auto encoder = drawing_nothing<tnn::TransformerEncoderImpl>(
      tnn::TransformerEncoderOptions(encoder_layer, options.num_encoder_layers())
          .norm(layer_norm(d)));
  tnn::TransformerDecoderLayer decoder_layer(tnn::TransformerDecoderLayerOptions(d, options.nhead())
                                                 .dim_feedforward(options.dim_feedforward())
                                                 .dropout(options.dropout())
                                                 .activation(options.activation()));
  auto decoder = drawing_nothing<tnn::TransformerDecoderImpl>(
      tnn::TransformerDecoderOptions(decoder_layer, options.num_decoder_layers())
          .norm(layer_norm(d)));
  auto with_stacks = options;
  with_stacks.custom_encoder(tnn::AnyModule(encoder)).custom_decoder(tnn::AnyModule(decoder));
  // libtorch may clone the stacks it is given (values kept) and initialises: nothing drawn
  auto transformer = drawing_nothing<TransformerImpl>(with_stacks, batch_first);
  torch::NoGradGuard no_grad;
  for (auto& p : transformer->parameters()) {
    if (p.dim() > 1) tnn::init::xavier_uniform_(p);
  }
  return transformer;
}

torch::Tensor encoder_forward(torch::nn::TransformerEncoderImpl& encoder, const torch::Tensor& src,
                              const TransformerMasks& masks) {
  return encoder_stack_forward(encoder, src, masks.src, masks.src_key_padding);
}

torch::Tensor TransformerEncoderImpl::forward(const torch::Tensor& src,
                                              const TransformerMasks& masks) {
  return in(encoder_forward(*this, in(src, batch_first_), masks), batch_first_);
}

torch::Tensor TransformerDecoderLayerImpl::forward(const torch::Tensor& tgt,
                                                   const torch::Tensor& memory,
                                                   const TransformerMasks& masks) {
  return in(decoder_layer_forward(*this, in(tgt, batch_first_), in(memory, batch_first_), masks.tgt,
                                  masks.memory, masks.tgt_key_padding, masks.memory_key_padding),
            batch_first_);
}

torch::Tensor TransformerDecoderImpl::forward(const torch::Tensor& tgt, const torch::Tensor& memory,
                                              const TransformerMasks& masks) {
  return in(decoder_stack_forward(*this, in(tgt, batch_first_), in(memory, batch_first_), masks.tgt,
                                  masks.memory, masks.tgt_key_padding, masks.memory_key_padding),
            batch_first_);
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& src, const torch::Tensor& tgt,
                                       const TransformerMasks& masks) {
  auto encoder = std::dynamic_pointer_cast<torch::nn::TransformerEncoderImpl>(this->encoder.ptr());
  auto decoder = std::dynamic_pointer_cast<torch::nn::TransformerDecoderImpl>(this->decoder.ptr());
  TORCH_CHECK(encoder && decoder,
              "nn.Transformer: its encoder and decoder must be PyTorch's stacks");
  auto memory =
      encoder_stack_forward(*encoder, in(src, batch_first_), masks.src, masks.src_key_padding);
  return in(decoder_stack_forward(*decoder, in(tgt, batch_first_), memory, masks.tgt, masks.memory,
                                  masks.tgt_key_padding, masks.memory_key_padding),
            batch_first_);
}

}  // namespace engine::nn
