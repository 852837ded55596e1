// The model of a benchmark point, built by the Lua layer: a zoo id (modules/zoo.lua) or the
// path of a Lua module file, so researchers can benchmark the module they are writing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/nn/model.hpp"

namespace engine::lua {

class Runtime;

struct BenchModel {
  nn::Model model;
  std::vector<int64_t> input_shape;  // one sample; empty when neither the zoo nor the file says
  int64_t classes = 0;               // 0 when unknown
  std::string source;                // "zoo" or the file's path
};

// `model` is a zoo id, else a file returning a module class (nn.Module:extend), which is built
// with no arguments, or a module. A module file may say its input with fields `input_shape`
// ({1, 28, 28}) and `classes`. Unknown ids that are no file are a UsageError listing the zoo;
// models whose input is not an image or a feature vector (tokens, tabular) are refused.
BenchModel load_bench_model(Runtime& runtime, const std::string& model);

}  // namespace engine::lua
