#include "engine/bench/parameters.hpp"

namespace engine::bench {

const Schema& point_schema() {
  static const Schema schema = {
      {"model", std::string()},
      {"batch_size", int64_t{16}},
      {"num_batches", int64_t{20}},
      {"num_warmup_batches", int64_t{3}},
      {"phase", std::string("training")},
      {"device", std::string("cpu")},
      {"dtype", std::string("float32")},
      {"data", std::string("synthetic")},
      {"data_dir", std::string()},
      {"data_backend", std::string()},
      {"data_shuffle", false},
      {"num_loader_threads", int64_t{0}},
      {"cudnn_benchmark", true},
      {"cudnn_fastest", false},
      {"tf32", std::string()},               // empty: PyTorch's defaults (engine bench --tf32)
      {"max_device_memory", std::string()},  // empty: no cap
      {"cuda_graphs", false},
      {"memory_format", std::string("contiguous")},
      {"threads", int64_t{0}},
      {"seed", int64_t{1}},
      {"input_shape", std::string()},
      {"num_classes", int64_t{0}},
      {"allocator", std::string("caching")},
      {"world_size", int64_t{1}},  // processes of a data-parallel point: engine bench --nproc
      {"enabled", true},
      {"label", std::string()},
  };
  return schema;
}

std::vector<std::string> point_flags(const Point& point) {
  std::vector<std::string> flags;
  for (const auto& [name, value] : point) {
    if (name == "enabled" || name == "label" || name.empty() || name[0] == '_') continue;
    const std::string text = value_text(value);
    if (text.empty()) continue;
    if ((name == "num_classes" || name == "num_loader_threads") && text == "0") continue;
    if (name == "world_size") {  // the point's processes, started by its own launcher
      if (text != "1") flags.insert(flags.end(), {"--nproc", text});
      continue;
    }
    flags.push_back("--" + name);
    flags.push_back(text);
  }
  return flags;
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
