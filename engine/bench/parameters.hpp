// The parameters of a benchmark point, declared once: name, type and default, the help text of
// its `engine bench` flag, DLBS's spelling, and where it cannot apply. The CLI's flags, a
// sweep's schema, the flags a sweep hands a child process and the n/a list all come from here.
#pragma once

#include <string>
#include <vector>

#include "engine/bench/sweep.hpp"

namespace engine::bench {

struct PointOptions;

struct Parameter {
  std::string name;
  // Its type is the parameter's: a sweep's value must have it, a flag's text is read as it.
  Value default_value;
  // The help of its flag, `--name` (world_size's is the launcher's --nproc); empty for those
  // that have no flag: enabled, label and launcher.
  std::string help;
  // DLBS's experiment parameter of the same meaning (exp.replica_batch); empty where DLBS has
  // none.
  std::string dlbs;
  // Why the parameter, set, cannot apply to a point with these options ("no cuDNN on cpu"):
  // it is recorded as n/a, not refused. Null, or "" returned, where it applies.
  const char* (*not_applicable)(const PointOptions& options) = nullptr;
  // 0 stands for "not set" (num_classes, num_loader_threads: the model's, the loader's own).
  bool zero_is_unset = false;
  // A text that is true, false or empty (tf32: empty keeps PyTorch's defaults): its flag takes
  // a boolean, as a boolean parameter's does.
  bool optional_boolean = false;
};

// Whether `engine bench --NAME` sets the parameter: not for enabled and label (no flag), nor
// world_size, whose flag is the launcher's --nproc.
bool has_own_flag(const Parameter& parameter);

// Whether the parameter's flag takes true or false, a bare flag meaning true.
bool takes_boolean(const Parameter& parameter);

// Every parameter of a point, in the order `engine bench --help` lists them: model,
// batch_size, num_batches, num_warmup_batches, phase, device, dtype, data, data_dir,
// data_backend, data_shuffle, num_loader_threads, cudnn_benchmark, cudnn_fastest, tf32,
// max_device_memory, cuda_graphs, memory_format, threads, seed, input_shape, num_classes,
// allocator, world_size, enabled, label, launcher.
const std::vector<Parameter>& point_parameters();
// The parameter of that name, or null.
const Parameter* find_parameter(const std::string& name);

// DLBS's other spellings of the phase: `--forward_only true` is `--phase inference`,
// `--data_loader_only true` is `--phase data_ingestion`.
struct PhaseAlias {
  std::string flag;   // forward_only
  std::string phase;  // inference
  std::string help;
};
const std::vector<PhaseAlias>& phase_aliases();

// What a sweep may name: every parameter with its default.
const Schema& point_schema();

// Whether the point sets the parameter: it has a value that is not empty (nor 0 where 0 means
// unset). Only a set parameter is passed on as a flag or recorded as n/a.
bool is_set(const Point& point, const Parameter& parameter);

// The `engine bench` flags that run this point alone (--model resnet18 --batch_size 16 ...):
// every set parameter but enabled and label; the script's own (_name) are not parameters.
std::vector<std::string> point_flags(const Point& point);

// A flag's text as the parameter's value: an integer, a boolean (true/false, 1/0, yes/no,
// on/off) or the text itself; a UsageError naming --name otherwise.
Value parse_parameter(const Parameter& parameter, const std::string& text);

// Text of a parameter, or "" when the point does not have it.
std::string param_text(const Point& point, const std::string& name);
int64_t param_int(const Point& point, const std::string& name);

}  // namespace engine::bench
