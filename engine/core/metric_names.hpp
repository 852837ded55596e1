// What a metric's name says about it, shared by the trainer (early stopping, keep_best) and
// the reports (best values): which names are built in and which way is better.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace engine::core {

// k of "top5"; 0 for any other name.
int64_t topk_of(const std::string& name);
// precision, recall and f1: metrics computed from per-class counts.
bool is_class_count_metric(const std::string& name);
// accuracy, top<k>, precision, recall and f1 grow as a model improves; losses and errors
// (loss, mse, mae) shrink, and so does a script's own metric unless it declared otherwise
// (declare_direction). "validation.accuracy" is read by its last part.
bool larger_is_better(const std::string& metric);

// Throws UsageError unless `name` can be a file's or an HDF5 dataset's name as it is: not empty,
// not "." or "..", no '/', '\\' or control characters. `what` says whose name it is in the
// message ("metric", "the script's name").
void check_path_name(const std::string& what, const std::string& name);

// A script's own metric and its direction (metrics = {iou = {fn, mode = 'max'}}), for this
// process: the trainer's best values, early stopping, keep_best and the reports then agree.
void declare_direction(const std::string& metric, bool larger);
// Every direction declared so far, by metric name.
std::map<std::string, bool> declared_directions();

}  // namespace engine::core
