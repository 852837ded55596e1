// A module's own parameters and buffers by name, as PyTorch's attributes reach them
// (`lin.weight`, `bn.running_mean`), and replaced by another tensor (`decoder.weight =
// encoder.weight`: weight tying, one tensor in two places). libtorch keeps each in two places,
// the module's dictionary and the member its forward reads; both change together here. A
// tensor held in two places is one parameter: unique_parameters lists it once, as PyTorch's
// parameters() does.
#pragma once

#include <torch/nn/module.h>

#include <optional>
#include <string>
#include <vector>

namespace engine::nn {

// The parameter registered on `module` itself under `name` (not a descendant's); an undefined
// tensor for a slot registered empty (a Linear without bias: PyTorch's None); nullopt when the
// module has no such parameter.
std::optional<torch::Tensor> own_parameter(torch::nn::Module& module, const std::string& name);
std::optional<torch::Tensor> own_buffer(torch::nn::Module& module, const std::string& name);
// The names of both, registration order, empty slots included.
std::vector<std::string> own_tensor_names(torch::nn::Module& module);

// Puts `value` in the slot `name` (a parameter or a buffer of `module` itself), where the
// module's forward reads it too. A buffer takes value's data in place (libtorch keeps buffers
// private), so it holds the same values without being the same tensor. Throws UsageError naming the
// module when it has no such slot, or when its type is not one whose members are known (then the
// value can be copied in instead). An undefined value empties a parameter slot (PyTorch's `lin.bias
// = None`).
void replace_own_tensor(torch::nn::Module& module, const std::string& name,
                        const torch::Tensor& value);

// Puts `value` in the slot `name` of the module's own dictionary only, registering it when the
// slot is new: for modules whose forward reads nothing else (modules written in Lua). A buffer
// that exists takes value's data in place.
void set_own_parameter(torch::nn::Module& module, const std::string& name,
                       const torch::Tensor& value);
void set_own_buffer(torch::nn::Module& module, const std::string& name, const torch::Tensor& value);

// Every parameter of module and its descendants once, in PyTorch's order (the first place a
// shared tensor is registered wins), as PyTorch's parameters() and named_parameters().
std::vector<torch::Tensor> unique_parameters(const torch::nn::Module& module);
std::vector<std::pair<std::string, torch::Tensor>> unique_named_parameters(
    const torch::nn::Module& module);

}  // namespace engine::nn
