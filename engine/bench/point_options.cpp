#include "engine/bench/point_options.hpp"

#include <sstream>

#include "engine/bench/parameters.hpp"
#include "engine/bench/point_process.hpp"
#include "engine/core/device.hpp"
#include "engine/core/device_memory.hpp"
#include "engine/core/errors.hpp"

namespace engine::bench {
namespace {

// The point's value of a parameter, else its default; a value of another type (a sweep checks
// types, a caller building a point by hand may not) is a UsageError naming the parameter.
template <typename T>
T parameter_value(const Point& point, const std::string& name) {
  const Parameter* parameter = find_parameter(name);
  const auto it = point.find(name);
  const Value& value = it == point.end() ? parameter->default_value : it->second;
  if (const auto* typed = std::get_if<T>(&value)) return *typed;
  throw core::UsageError("parameter '" + name + "' is the " + value_type(value) + " " +
                         value_text(value) + "; it must be " +
                         value_type(parameter->default_value));
}

std::string text_of(const Point& point, const std::string& name) {
  return parameter_value<std::string>(point, name);
}

// DLBS's device and dtype names as well as the engine's.
torch::Device bench_device(const std::string& name) {
  return core::parse_device(name == "gpu" ? "cuda" : name);
}

train::Precision bench_precision(const std::string& name) {
  if (name == "float" || name == "float32") return train::Precision::kFloat32;
  if (name == "bfloat16") return train::Precision::kBFloat16;
  if (name == "float16" || name == "half") return train::Precision::kFloat16;
  if (name == "float16_master") return train::Precision::kFloat16Master;
  throw core::UsageError(
      "--dtype must be float32 (float), bfloat16, float16 or float16_master, got '" + name + "'");
}

std::vector<int64_t> shape_of(const std::string& text) {
  std::vector<int64_t> shape;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    try {
      size_t used = 0;
      shape.push_back(std::stoll(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw core::UsageError("--input_shape takes sizes separated by commas (1,28,28), got '" +
                             text + "'");
    }
  }
  return shape;
}

bool is_channels_last(const std::string& memory_format) {
  if (memory_format != "contiguous" && memory_format != "channels_last") {
    throw core::UsageError("--memory_format must be contiguous or channels_last, got '" +
                           memory_format + "'");
  }
  return memory_format == "channels_last";
}

void read_data_options(const Point& point, DataOptions& data) {
  data.real = parse_data_kind(text_of(point, "data"));
  data.place = synthetic_place(text_of(point, "data"));
  data.dir = text_of(point, "data_dir");
  data.backend = text_of(point, "data_backend");
  // DLBS's PyTorch backend reads a --data_dir as Caffe's LMDB unless told otherwise
  if (data.real && data.backend.empty()) data.backend = "caffe_lmdb";
  data.shuffle = parameter_value<bool>(point, "data_shuffle");
  const int64_t loader_threads = parameter_value<int64_t>(point, "num_loader_threads");
  if (loader_threads < 0) {
    throw core::UsageError("--num_loader_threads must be 0 or more, got " +
                           std::to_string(loader_threads));
  }
  data.loader_threads = static_cast<int>(loader_threads);
}

}  // namespace

PointOptions point_options(const Point& point) {
  PointOptions o;
  o.batch_size = parameter_value<int64_t>(point, "batch_size");
  o.batches = parameter_value<int64_t>(point, "num_batches");
  o.warmup_batches = parameter_value<int64_t>(point, "num_warmup_batches");
  o.phase = parse_phase(text_of(point, "phase"));
  o.device = point_device(point);
  o.precision = bench_precision(text_of(point, "dtype"));
  const int64_t seed = parameter_value<int64_t>(point, "seed");
  if (seed < 0) throw core::UsageError("--seed must be 0 or more, got " + std::to_string(seed));
  o.seed = static_cast<uint64_t>(seed);
  read_data_options(point, o.data);
  o.data.augment = o.phase != Phase::kInference;
  o.cuda_graphs = parameter_value<bool>(point, "cuda_graphs");
  o.channels_last = is_channels_last(text_of(point, "memory_format"));
  if (o.cuda_graphs && o.phase == Phase::kTraining && o.warmup_batches < 3) {
    throw core::UsageError(
        "--cuda_graphs needs --num_warmup_batches 3 or more: the step is recorded at the third "
        "batch, after two eager ones, and a recording must not be timed");
  }
  const std::string max_memory = text_of(point, "max_device_memory");
  if (!max_memory.empty() && o.device.is_cuda()) {
    o.device_memory_fraction = device_memory_fraction(
        max_memory, core::device_memory_bytes(o.device), "--max_device_memory");
  }
  const std::string shape = text_of(point, "input_shape");
  o.input_shape = shape.empty() ? std::vector<int64_t>() : shape_of(shape);
  o.classes = parameter_value<int64_t>(point, "num_classes");
  return o;
}

torch::Device point_device(const Point& point) {
  return bench_device(text_of(point, "device"));
}

core::DeviceSettings point_device_settings(const Point& point) {
  core::DeviceSettings settings;
  settings.cudnn_benchmark = parameter_value<bool>(point, "cudnn_benchmark");
  const std::string tf32 = text_of(point, "tf32");
  if (!tf32.empty()) settings.tf32 = core::parse_setting_bool("--tf32", tf32);
  return settings;
}

std::vector<std::string> not_applicable(const Point& point, const PointOptions& options) {
  std::vector<std::string> na;
  for (const auto& parameter : point_parameters()) {
    if (!parameter.not_applicable || !is_set(point, parameter)) continue;
    const std::string reason = parameter.not_applicable(options);
    if (!reason.empty()) na.push_back(parameter.name + " (" + reason + ")");
  }
  return na;
}

}  // namespace engine::bench
