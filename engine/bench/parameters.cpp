#include "engine/bench/parameters.hpp"

#include <cerrno>
#include <cstdlib>

#include "engine/bench/point.hpp"
#include "engine/core/device_settings.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/memory.hpp"

namespace engine::bench {
namespace {

const char* off_cuda(const PointOptions& o, const char* reason) {
  return o.device.is_cuda() ? "" : reason;
}

// Whether the point reads batches through the loader (real data, or the loader alone).
bool uses_loader(const PointOptions& o) {
  return o.data.real || o.phase == Phase::kDataIngestion;
}

std::vector<Parameter> declare_parameters() {
  using std::string;
  const auto no_cudnn = [](const PointOptions& o) { return off_cuda(o, "no cuDNN on cpu"); };
  const auto synthetic = [](const PointOptions& o) { return o.data.real ? "" : "synthetic data"; };
  const auto in_memory = [](const PointOptions& o) {
    return uses_loader(o) ? "" : "a synthetic batch in memory";
  };
  return {
      {"model", string(), "a zoo id (engine models) or the path of a Lua module file", "exp.model"},
      {"batch_size", int64_t{16}, "samples per batch", "exp.replica_batch"},
      {"num_batches", int64_t{20}, "timed batches", "exp.num_batches"},
      {"num_warmup_batches", int64_t{3}, "batches run first and not timed",
       "exp.num_warmup_batches"},
      {"phase", string("training"), "training, inference or data_ingestion", "exp.phase"},
      {"device", string("cpu"), "cpu, cuda, cuda:N (gpu: cuda)", "exp.device_type"},
      {"dtype", string("float32"),
       "float32 (float), bfloat16 or float16 (autocast, as training), float16_master (DLBS's: a "
       "float16 model, float32 master weights)",
       "exp.dtype"},
      {"data", string("synthetic"),
       "synthetic (a batch made once, in memory) or real (--data_dir through the loader)",
       "exp.data"},
      {"data_dir", string(), "the dataset's folder (the HDF5 file for hdf5) with --data real",
       "exp.data_dir", synthetic},
      {"data_backend", string(), "idx, cifar, image_folder, caffe_lmdb or hdf5 with --data real",
       "pytorch.data_backend", synthetic},
      {"data_shuffle", false, "shuffle the data each epoch (true or false)", "pytorch.data_shuffle",
       in_memory},
      {"num_loader_threads", int64_t{0}, "the loader's threads (0: its default)",
       "pytorch.num_loader_threads", in_memory, true},
      {"cudnn_benchmark", true, core::kCudnnBenchmarkHelp, "pytorch.cudnn_benchmark", no_cudnn},
      {"cudnn_fastest", false, "DLBS's cuDNN flag (recorded as n/a: libtorch has no such setting)",
       "pytorch.cudnn_fastest",
       [](const PointOptions& o) {
         return o.device.is_cuda() ? "libtorch has no such setting" : "no cuDNN on cpu";
       }},
      // empty: PyTorch's defaults
      {"tf32", string(), core::kTf32Help, "",
       [](const PointOptions& o) { return off_cuda(o, "no TensorFloat-32 on cpu"); }, false, true},
      // empty: no cap
      {"max_device_memory", string(),
       "the share of the GPU's memory libtorch's caching allocator may take: a fraction (0.5) or "
       "a size (20G); beyond it the point runs out of memory (CUDA only)",
       "", [](const PointOptions& o) { return off_cuda(o, "no device memory on cpu"); }},
      {"cuda_graphs", false,
       "record the training step as a CUDA graph and replay it (true or false; CUDA only; the "
       "first warm-up batches run eagerly)",
       "",
       [](const PointOptions& o) {
         return o.phase == Phase::kTraining ? "" : "the training phase's step only";
       }},
      {"memory_format", string("contiguous"),
       "contiguous or channels_last: convolution weights and image batches laid out N x H x W x "
       "C (PyTorch's torch.channels_last)",
       ""},
      {"threads", int64_t{0}, "libtorch threads (0: all cores)", ""},
      {"seed", int64_t{1}, "seed of the synthetic batch and the model's weights", ""},
      {"input_shape", string(),
       "one sample's shape for a module file that does not say it (1,28,28)", ""},
      {"num_classes", int64_t{0}, "classes for a module file that does not say it", "", nullptr,
       true},
      {"allocator", string("caching"), core::kAllocatorHelp, ""},
      {"world_size", int64_t{1},
       "processes of a data-parallel point (engine bench --nproc N; the launcher's flag)",
       "exp.num_replicas"},
      {"enabled", true, "", ""},
      {"label", string(), "", ""},
      // no flag: words before the point's process (DLBS's runtime.launcher), see launcher.hpp
      {"launcher", string(), "", "runtime.launcher"},
  };
}

}  // namespace

const std::vector<Parameter>& point_parameters() {
  static const std::vector<Parameter> parameters = declare_parameters();
  return parameters;
}

const Parameter* find_parameter(const std::string& name) {
  for (const auto& parameter : point_parameters()) {
    if (parameter.name == name) return &parameter;
  }
  return nullptr;
}

bool has_own_flag(const Parameter& parameter) {
  return !parameter.help.empty() && parameter.name != "world_size";
}

bool takes_boolean(const Parameter& parameter) {
  return parameter.optional_boolean || std::holds_alternative<bool>(parameter.default_value);
}

const std::vector<PhaseAlias>& phase_aliases() {
  static const std::vector<PhaseAlias> aliases = {
      {"forward_only", "inference", "the inference phase (DLBS; takes true or false)"},
      {"data_loader_only", "data_ingestion",
       "the data_ingestion phase (DLBS; takes true or false)"},
  };
  return aliases;
}

const Schema& point_schema() {
  static const Schema schema = [] {
    Schema s;
    for (const auto& parameter : point_parameters()) s[parameter.name] = parameter.default_value;
    return s;
  }();
  return schema;
}

bool is_set(const Point& point, const Parameter& parameter) {
  const auto it = point.find(parameter.name);
  if (it == point.end()) return false;
  const std::string text = value_text(it->second);
  return !text.empty() && !(parameter.zero_is_unset && text == "0");
}

std::vector<std::string> point_flags(const Point& point) {
  std::vector<std::string> flags;
  for (const auto& [name, value] : point) {
    const Parameter* parameter = find_parameter(name);
    if (!parameter || parameter->help.empty() || !is_set(point, *parameter)) continue;
    const std::string text = value_text(value);
    if (name == "world_size") {  // the point's processes, started by its own launcher
      if (text != "1") flags.insert(flags.end(), {"--nproc", text});
      continue;
    }
    flags.push_back("--" + name);
    flags.push_back(text);
  }
  return flags;
}

Value parse_parameter(const Parameter& parameter, const std::string& text) {
  const std::string flag = "--" + parameter.name;
  if (std::holds_alternative<bool>(parameter.default_value)) {
    return core::parse_setting_bool(flag, text);
  }
  if (parameter.optional_boolean) {  // checked here, kept as the text a sweep would give
    return std::string(core::parse_setting_bool(flag, text) ? "true" : "false");
  }
  if (std::holds_alternative<int64_t>(parameter.default_value)) {
    char* end = nullptr;
    errno = 0;
    const long long number = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0) {
      throw core::UsageError(flag + " takes an integer, got '" + text + "'");
    }
    return static_cast<int64_t>(number);
  }
  return text;
}

std::string param_text(const Point& point, const std::string& name) {
  const auto it = point.find(name);
  return it == point.end() ? std::string() : value_text(it->second);
}

int64_t param_int(const Point& point, const std::string& name) {
  const auto it = point.find(name);
  if (it == point.end()) return 0;
  if (const auto* i = std::get_if<int64_t>(&it->second)) return *i;
  if (const auto* d = std::get_if<double>(&it->second)) return static_cast<int64_t>(*d);
  return 0;
}

}  // namespace engine::bench
