// The parameters of a benchmark point, with DLBS's names: what a sweep may set, their defaults,
// and the `engine bench` flags that run one point.
#pragma once

#include <string>
#include <vector>

#include "engine/bench/sweep.hpp"

namespace engine::bench {

// Every parameter a point has, with its default: model, batch_size, num_batches,
// num_warmup_batches, phase, device, dtype, data, data_dir, data_backend, data_shuffle,
// num_loader_threads, cudnn_benchmark, cudnn_fastest, threads, seed, input_shape, num_classes,
// allocator, enabled, label.
const Schema& point_schema();

// The `engine bench` flags that run this point alone (--model resnet18 --batch_size 16 ...):
// every parameter but enabled, label, the script's own (_name) and empty values.
std::vector<std::string> point_flags(const Point& point);

// Text of a parameter, or "" when the point does not have it.
std::string param_text(const Point& point, const std::string& name);
int64_t param_int(const Point& point, const std::string& name);

}  // namespace engine::bench
