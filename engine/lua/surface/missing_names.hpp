// What a script is told when it reaches for a name the engine does not have: the library and
// the name, PyTorch's name for it when PyTorch has one (and why the engine does not, where that
// is a choice), and the nearest names the engine has. The libraries' tables, tensors and
// built-in layers raise it, so that a missing name is never a silent nil.
#pragma once

#include <string>
#include <vector>

#include "engine/lua/runtime/runtime.hpp"

namespace engine::lua {

// The PyTorch name that `name` of the engine's library `label` stands for ("nn", "BCELoss" ->
// "torch.nn.BCELoss"; "Tensor", "view_as" -> "torch.Tensor.view_as"), or "" when PyTorch has no
// such name. Labels: torch, torch.linalg, torch.autograd, nn, nn.F, nn.init, nn.utils, optim,
// Tensor, Module, Optimizer; others (data, engine, search) stand for no PyTorch namespace.
std::string pytorch_name_of(const std::string& label, const std::string& name);

// "nn has no 'BCELoss' (torch.nn.BCELoss): did you mean nn.BCEWithLogitsLoss?" from the names
// `known` that the library has. `shown` is how the library's names are written in the
// suggestion ("nn.", "x:", "m.").
std::string missing_name_message(const std::string& label, const std::string& name,
                                 const std::vector<std::string>& known, const std::string& shown);

// How a value of the type `label` is written before its methods in a suggestion: "x:" for a
// Tensor, "opt:" for an Optimizer, "ds:" for a Pipeline, "m:" for a Module...
std::string method_prefix(const std::string& label);

// Makes the table at index raise missing_name_message (at the script's line) for a string key it
// lacks, and the plain tables among its fields that stand for PyTorch namespaces too (nn.F,
// nn.init, torch.linalg). rawget(t, key) still reads a field that may be absent.
void guard_library(lua_State* L, int index, const std::string& label);

// The string keys of the table at index (raw), sorted.
std::vector<std::string> table_keys(lua_State* L, int index);

}  // namespace engine::lua
