// The model of a benchmark point, built by the Lua layer: a zoo id (modules/zoo.lua) or the
// path of a Lua module file, so researchers can benchmark the module they are writing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/data/batch.hpp"
#include "engine/nn/model.hpp"

namespace engine::lua {

class Runtime;

struct BenchModel {
  nn::Model model;
  std::vector<int64_t> input_shape;  // one sample; empty when neither the zoo nor the file says
  int64_t classes = 0;               // 0 when unknown
  std::string source;                // "zoo" or the file's path
  // Set when the module has an example_input(n) method: a batch of n inputs it makes itself
  // (a tensor, or a table of named inputs such as wide_deep's).
  std::function<data::Batch(int64_t batch_size)> example_batch;
  // A module file's class whose init takes arguments, built here with none (each then has the
  // value init gives it when missing): "Net:init(width, depth)"; empty otherwise.
  std::string unsupplied_arguments;
};

// `model` is a zoo id, else a file returning a module class (nn.Module:extend), which is built
// with no arguments, or a module. A module file may say its input with fields `input_shape`
// ({1, 28, 28}) and `classes`, or make its own batches with a method example_input(n). Unknown
// ids that are no file are a UsageError listing the zoo; models whose input is not an image or
// a feature vector (tokens, tabular) and that have no example_input are refused.
BenchModel load_bench_model(Runtime& runtime, const std::string& model);

}  // namespace engine::lua
