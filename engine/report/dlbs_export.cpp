#include "engine/report/dlbs_export.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/core/statuses.hpp"

namespace engine::report {
namespace {

using Json = nlohmann::ordered_json;

Json json_of(const io::h5::Attribute& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* d = std::get_if<double>(&value)) return std::isfinite(*d) ? Json(*d) : Json();
  return std::get<std::string>(value);
}

Json figure(double value) {
  return std::isfinite(value) ? Json(value) : Json();
}

std::string text_attribute(const io::BenchContents& file, const std::string& name) {
  const auto it = file.attributes.find(name);
  if (it == file.attributes.end()) return {};
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  return {};
}

bool on_gpu(const std::string& device) {
  return device.rfind("cuda", 0) == 0 || device == "gpu";
}

// DLBS's exp.gpus: the GPUs' indices, comma-separated ("0,1,2,3"); "" on the CPU. A point of
// one process on cuda:N used GPU N; a data-parallel point's ranks take GPUs 0 .. world_size-1.
std::string gpu_list(const io::BenchRow& row) {
  if (!on_gpu(row.device)) return {};
  if (row.world_size <= 1) {
    const auto colon = row.device.find(':');
    return colon == std::string::npos ? "0" : row.device.substr(colon + 1);
  }
  std::string list;
  for (int64_t i = 0; i < row.world_size; ++i) list += (i ? "," : "") + std::to_string(i);
  return list;
}

// The ok point's times as DLBS's PyTorch backend reports them: the mean and NumPy's std (over
// n, not n - 1) of its timed batches, in milliseconds, and the throughput as an integer.
void add_results(const io::BenchPoint& point, int64_t effective_batch, Json& record) {
  const auto& row = point.row;
  double mean = row.mean_ms, std_dev = row.std_ms;
  if (!point.batch_ms.empty()) {
    double sum = 0, squares = 0;
    for (double ms : point.batch_ms) sum += ms;
    mean = sum / static_cast<double>(point.batch_ms.size());
    for (double ms : point.batch_ms) squares += (ms - mean) * (ms - mean);
    std_dev = std::sqrt(squares / static_cast<double>(point.batch_ms.size()));
  }
  double throughput = row.throughput;
  if (!std::isfinite(throughput) && mean > 0) throughput = effective_batch * 1000.0 / mean;
  record["results.time"] = figure(mean);
  record["results.time_std"] = figure(std_dev);
  record["results.throughput"] =
      std::isfinite(throughput) ? Json(static_cast<int64_t>(throughput)) : Json();
  record["results.time_data"] = point.batch_ms;
}

// What the engine measured beyond DLBS's keys, under engine.<field>.
void add_engine_figures(const io::BenchContents& file, const io::BenchPoint& point, Json& record) {
  const auto& row = point.row;
  record["engine.file"] = file.path;
  record["engine.point"] = row.point;
  record["engine.device"] = row.device;
  record["engine.threads"] = row.threads;
  for (const auto& [name, value] : {std::pair{"p50_ms", row.p50_ms},
                                    {"p90_ms", row.p90_ms},
                                    {"p99_ms", row.p99_ms},
                                    {"throughput", row.throughput},
                                    {"pipelined_ms", row.pipelined_ms},
                                    {"throughput_pipelined", row.throughput_pipelined},
                                    {"throughput_per_rank", row.throughput_per_rank},
                                    {"scaling_efficiency", row.scaling_efficiency},
                                    {"data_ms", row.data_ms},
                                    {"forward_ms", row.forward_ms},
                                    {"backward_ms", row.backward_ms},
                                    {"optimizer_ms", row.optimizer_ms}}) {
    record[std::string("engine.") + name] = figure(value);
  }
  record["engine.peak_resident_bytes"] = row.peak_resident_bytes;
  record["engine.peak_device_bytes"] = row.peak_device_bytes;
  record["engine.repeats"] = row.repeats;
  record["engine.cpu_share"] = figure(row.cpu_share);
  record["engine.starved"] = row.starved;
  if (!row.reason.empty()) record["engine.reason"] = row.reason;
  if (!row.error_kind.empty()) record["engine.error_kind"] = row.error_kind;
}

// The resource monitor's series as DLBS's monitor writes them into a log (results.use.<name>):
// time (seconds from the point's start), cpu (% of a core), mem_res (resident, MiB), and on a
// GPU gpus (utilisation %) and gpus_mem (MiB), one entry per sample.
void add_resource_use(const io::BenchPoint& point, Json& record) {
  for (const auto& [series, key] : {std::pair{"seconds", "time"},
                                    {"cpu_percent", "cpu"},
                                    {"resident_mb", "mem_res"},
                                    {"gpu_percent", "gpus"},
                                    {"gpu_memory_mb", "gpus_mem"}}) {
    const auto it = point.resources.find(series);
    if (it != point.resources.end()) record[std::string("results.use.") + key] = it->second;
  }
}

Json point_record(const io::BenchContents& file, const io::BenchPoint& point,
                  const DlbsNames& names) {
  const auto& row = point.row;
  Json record = Json::object();
  record["exp.id"] =
      row.point_id.empty() ? file.path + "#" + std::to_string(row.point) : row.point_id;
  record["exp.status"] = core::name_of(row.status);
  record["exp.framework"] = "engine";
  record["exp.framework_title"] = "engine";
  record["exp.framework_ver"] = text_attribute(file, "engine_version");
  // the point's parameters under DLBS's names where it has them, the rest under engine.*
  for (const auto& [name, value] : point.parameters) {
    const auto it = names.find(name);
    record[it != names.end() ? it->second : "engine." + name] = json_of(value);
  }
  const int64_t world = row.world_size > 0 ? row.world_size : 1;
  const int64_t effective_batch = row.batch_size * world;
  const bool gpu = on_gpu(row.device);
  record["exp.model"] = row.model;
  record["exp.model_title"] = dlbs_model_title(row.model);
  record["exp.phase"] = row.phase;
  record["exp.dtype"] = row.dtype;
  record["exp.device_type"] = gpu ? "gpu" : "cpu";
  record["exp.gpus"] = gpu_list(row);
  record["exp.num_gpus"] = gpu ? world : 0;
  record["exp.num_replicas"] = world;
  record["exp.num_local_replicas"] = world;
  record["exp.replica_batch"] = row.batch_size;
  record["exp.effective_batch"] = effective_batch;
  record["exp.num_batches"] = row.num_batches;
  record["exp.node_title"] = text_attribute(file, "hostname");
  const std::string gpu_name = text_attribute(file, "gpu_name");
  record["exp.device_title"] =
      gpu && !gpu_name.empty() ? gpu_name : text_attribute(file, "cpu_model");
  if (row.status == core::PointStatus::kOk) {
    add_results(point, effective_batch, record);
  } else {
    record["results.status"] = "failure";
  }
  add_engine_figures(file, point, record);
  add_resource_use(point, record);
  return record;
}

}  // namespace

std::string dlbs_model_title(const std::string& model) {
  static const std::map<std::string, std::string> titles = {{"acoustic_model", "AcousticModel"},
                                                            {"alexnet", "AlexNet"},
                                                            {"alexnet_owt", "AlexNetOWT"},
                                                            {"deep_mnist", "DeepMNIST"},
                                                            {"googlenet", "GoogleNet"},
                                                            {"inception3", "InceptionV3"},
                                                            {"inception4", "InceptionV4"},
                                                            {"overfeat", "Overfeat"},
                                                            {"resnet18", "ResNet18"},
                                                            {"resnet34", "ResNet34"},
                                                            {"resnet50", "ResNet50"},
                                                            {"resnet101", "ResNet101"},
                                                            {"resnet152", "ResNet152"},
                                                            {"resnet200", "ResNet200"},
                                                            {"resnet269", "ResNet269"},
                                                            {"sensor_net", "SensorNet"},
                                                            {"vgg11", "VGG11"},
                                                            {"vgg13", "VGG13"},
                                                            {"vgg16", "VGG16"},
                                                            {"vgg19", "VGG19"}};
  const auto it = titles.find(model);
  return it == titles.end() ? model : it->second;
}

std::string dlbs_document(const std::vector<io::BenchContents>& files, const DlbsNames& names) {
  Json data = Json::array();
  for (const auto& file : files) {
    for (const auto& point : file.points) {
      // an inactive point (disabled, DLBS's exp.status = disabled) never ran: DLBS has no log
      // of it, so no record
      if (point.row.status == core::PointStatus::kInactive) continue;
      data.push_back(point_record(file, point, names));
    }
  }
  Json document = Json::object();
  document["data"] = std::move(data);
  return document.dump(2) + "\n";
}

std::string dlbs_log(const std::string& experiment, const io::BenchContents& file,
                     const io::BenchPoint& point, const DlbsNames& names) {
  const Json parameters = Json::parse(experiment);
  const Json record = point_record(file, point, names);
  std::string log;
  auto line = [&](const std::string& key, const Json& value) {
    log += "__" + key + "__= " + value.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  };
  for (const auto& [key, value] : parameters.items()) line(key, value);
  for (const auto& [key, value] : record.items()) {
    // the experiment's own values stand (exp.framework is the config's), but for its status
    if (!parameters.contains(key) || key == "exp.status" || key.rfind("results.", 0) == 0) {
      line(key, value);
    }
  }
  return log;
}

}  // namespace engine::report
