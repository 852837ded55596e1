#include "engine/nn/parameter_slots.hpp"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/rnn.h>

#include <unordered_set>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/nn/batchnorm.hpp"
#include "engine/nn/describe.hpp"

namespace engine::nn {
namespace {

using Slots = torch::OrderedDict<std::string, torch::Tensor>;

// libtorch keeps a module's parameter dictionary protected; a pointer to a member named through
// a derived class reaches it in any module (the standard's rule for protected members). Its
// buffers are private: they are read through named_buffers and replaced in place (set_data).
struct SlotAccess : torch::nn::Module {
  static Slots& parameters_of(torch::nn::Module& m) { return m.*(&SlotAccess::parameters_); }
};

template <class Impl>
using Member = torch::Tensor Impl::*;

// Sets the member of an `Impl` its forward reads for the slot `name`. Returns false when module
// is not an Impl; throws when it is one and `name` is none of its members.
template <class Impl>
bool set_member(torch::nn::Module& module, const std::string& name, const torch::Tensor& value,
                std::initializer_list<std::pair<const char*, Member<Impl>>> members) {
  auto* impl = dynamic_cast<Impl*>(&module);
  if (!impl) return false;
  for (const auto& [member_name, member] : members) {
    if (name == member_name) {
      impl->*member = value;
      return true;
    }
  }
  throw core::UsageError("cannot replace '" + name + "' of " + describe_layer(module) +
                         ": copy into it instead (m." + name + ":copy_(t) under torch.no_grad)");
}

template <class Conv>
bool set_conv(torch::nn::Module& module, const std::string& name, const torch::Tensor& value) {
  return set_member<Conv>(module, name, value, {{"weight", &Conv::weight}, {"bias", &Conv::bias}});
}

bool set_rnn(torch::nn::Module& module, const torch::Tensor& value) {
  // the recurrent layers read a flat list of their weights, rebuilt from the dictionary by to()
  auto rebuild = [&](auto* rnn) {
    rnn->to(value.defined() ? value.device() : torch::Device(torch::kCPU));
    return true;
  };
  if (auto* lstm = dynamic_cast<torch::nn::LSTMImpl*>(&module)) return rebuild(lstm);
  if (auto* gru = dynamic_cast<torch::nn::GRUImpl*>(&module)) return rebuild(gru);
  if (auto* rnn = dynamic_cast<torch::nn::RNNImpl*>(&module)) return rebuild(rnn);
  return false;
}

template <class Cell>
bool set_cell(torch::nn::Module& module, const std::string& name, const torch::Tensor& value) {
  return set_member<Cell>(module, name, value,
                          {{"weight_ih", &Cell::weight_ih},
                           {"weight_hh", &Cell::weight_hh},
                           {"bias_ih", &Cell::bias_ih},
                           {"bias_hh", &Cell::bias_hh}});
}

// The member of a built-in layer's type that holds slot `name`; false for types whose members
// are not known here.
bool set_layer_member(torch::nn::Module& m, const std::string& name, const torch::Tensor& v) {
  using namespace torch::nn;
  using MHA = MultiheadAttentionImpl;
  return set_member<LinearImpl>(m, name, v,
                                {{"weight", &LinearImpl::weight}, {"bias", &LinearImpl::bias}}) ||
         set_conv<Conv1dImpl>(m, name, v) || set_conv<Conv2dImpl>(m, name, v) ||
         set_conv<Conv3dImpl>(m, name, v) || set_conv<ConvTranspose1dImpl>(m, name, v) ||
         set_conv<ConvTranspose2dImpl>(m, name, v) || set_conv<ConvTranspose3dImpl>(m, name, v) ||
         set_member<EmbeddingImpl>(m, name, v, {{"weight", &EmbeddingImpl::weight}}) ||
         set_member<EmbeddingBagImpl>(m, name, v, {{"weight", &EmbeddingBagImpl::weight}}) ||
         set_member<BilinearImpl>(
             m, name, v, {{"weight", &BilinearImpl::weight}, {"bias", &BilinearImpl::bias}}) ||
         set_member<LayerNormImpl>(
             m, name, v, {{"weight", &LayerNormImpl::weight}, {"bias", &LayerNormImpl::bias}}) ||
         set_member<GroupNormImpl>(
             m, name, v, {{"weight", &GroupNormImpl::weight}, {"bias", &GroupNormImpl::bias}}) ||
         set_member<PReLUImpl>(m, name, v, {{"weight", &PReLUImpl::weight}}) ||
         set_member<nn::BatchNormImpl>(
             m, name, v,
             {{"weight", &nn::BatchNormImpl::weight},
              {"bias", &nn::BatchNormImpl::bias},
              {"running_mean", &nn::BatchNormImpl::running_mean},
              {"running_var", &nn::BatchNormImpl::running_var},
              {"num_batches_tracked", &nn::BatchNormImpl::num_batches_tracked}}) ||
         set_member<MHA>(m, name, v,
                         {{"in_proj_weight", &MHA::in_proj_weight},
                          {"in_proj_bias", &MHA::in_proj_bias},
                          {"bias_k", &MHA::bias_k},
                          {"bias_v", &MHA::bias_v},
                          {"q_proj_weight", &MHA::q_proj_weight},
                          {"k_proj_weight", &MHA::k_proj_weight},
                          {"v_proj_weight", &MHA::v_proj_weight}}) ||
         set_cell<LSTMCellImpl>(m, name, v) || set_cell<GRUCellImpl>(m, name, v) ||
         set_cell<RNNCellImpl>(m, name, v) || set_rnn(m, v);
}

}  // namespace

std::optional<torch::Tensor> own_parameter(torch::nn::Module& module, const std::string& name) {
  const Slots& slots = SlotAccess::parameters_of(module);
  if (const auto* found = slots.find(name)) return *found;
  return std::nullopt;
}

std::optional<torch::Tensor> own_buffer(torch::nn::Module& module, const std::string& name) {
  const auto buffers = module.named_buffers(/*recurse=*/false);
  if (const auto* found = buffers.find(name)) return *found;
  return std::nullopt;
}

std::vector<std::string> own_tensor_names(torch::nn::Module& module) {
  std::vector<std::string> names = SlotAccess::parameters_of(module).keys();
  for (const auto& name : module.named_buffers(/*recurse=*/false).keys()) names.push_back(name);
  return names;
}

void replace_own_tensor(torch::nn::Module& module, const std::string& name,
                        const torch::Tensor& value) {
  Slots& slots = SlotAccess::parameters_of(module);
  if (!slots.contains(name)) {
    auto buffer = own_buffer(module, name);
    if (!buffer) {
      throw core::UsageError(describe_layer(module) + " has no parameter or buffer '" + name +
                             "' (it has: " + core::join(own_tensor_names(module)) + ")");
    }
    if (!value.defined()) {
      throw core::UsageError("buffer '" + name + "' of " + describe_layer(module) +
                             " cannot be emptied (nil)");
    }
    buffer->set_data(value);  // the buffer's tensor now holds value's data
    return;
  }
  const torch::Tensor before = slots[name];
  slots[name] = value;
  try {
    if (!set_layer_member(module, name, value)) {
      throw core::UsageError("cannot replace '" + name + "' of " + describe_layer(module) +
                             ": copy into it instead (m." + name +
                             ":copy_(t) under torch.no_grad)");
    }
  } catch (...) {
    slots[name] = before;
    throw;
  }
}

void set_own_parameter(torch::nn::Module& module, const std::string& name,
                       const torch::Tensor& value) {
  Slots& slots = SlotAccess::parameters_of(module);
  if (auto* slot = slots.find(name)) {
    *slot = value;
  } else {
    slots.insert(name, value);
  }
}

void set_own_buffer(torch::nn::Module& module, const std::string& name,
                    const torch::Tensor& value) {
  if (auto buffer = own_buffer(module, name)) {
    buffer->set_data(value);
  } else {
    module.register_buffer(name, value);
  }
}

std::vector<std::pair<std::string, torch::Tensor>> unique_named_parameters(
    const torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  std::unordered_set<const void*> seen;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    if (seen.insert(item.value().unsafeGetTensorImpl()).second)
      out.emplace_back(item.key(), item.value());
  }
  return out;
}

std::vector<torch::Tensor> unique_parameters(const torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  for (auto& [name, tensor] : unique_named_parameters(module)) out.push_back(std::move(tensor));
  return out;
}

}  // namespace engine::nn
