#include "engine/run/bench_point.hpp"

#include <c10/util/Exception.h>

#include <new>

#include "engine/bench/machine.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/bench/point_options.hpp"
#include "engine/bench/sweep_runner.hpp"
#include "engine/core/device_settings.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/gpu_facts.hpp"
#include "engine/core/log.hpp"
#include "engine/core/resource_monitor.hpp"
#include "engine/core/seed.hpp"
#include "engine/core/statuses.hpp"
#include "engine/core/threads.hpp"
#include "engine/distributed/group.hpp"

namespace engine::run {
namespace {

// "categorical [8], input [5]": the inputs of a batch by name, with one sample's shape.
std::string example_shapes(const data::Batch& batch) {
  std::string text;
  for (const auto& [name, tensor] : batch.named_inputs()) {
    text += (text.empty() ? "" : ", ") + name + " " + core::shape_string(tensor.sizes().slice(1));
  }
  return text;
}

// The model's own input shape and classes where the point does not give them.
void complete_from_model(bench::PointOptions& o, const lua::BenchModel& model,
                         const std::string& id) {
  if (o.input_shape.empty()) o.input_shape = model.input_shape;
  if (o.classes <= 0) o.classes = model.classes;
  o.example_batch = model.example_batch;
  if (o.input_shape.empty() && !o.example_batch) {
    throw core::UsageError(id +
                           " does not say its input shape: give --input_shape (1,28,28) or set "
                           "the class's input_shape field");
  }
  if (o.classes == 0) {
    throw core::UsageError(id +
                           " does not say its number of classes: give --num_classes or set the "
                           "class's classes field");
  }
}

// The row and details of a point that ran.
io::BenchPoint measured_row(const std::string& model, const bench::PointOptions& o,
                            const bench::PointResult& result, const BenchRequest& request) {
  io::BenchPoint point;
  auto& row = point.row;
  row.model = model;
  row.phase = bench::phase_name(o.phase);
  row.device = o.device.str();
  row.dtype = train::precision_name(o.precision);
  row.batch_size = o.batch_size;
  row.threads = request.threads;
  row.world_size = request.group ? request.group->size() : 1;
  row.status = core::PointStatus::kOk;
  bench::record_summary(row, result.summary);
  bench::record_pipelined(row, result.pipelined_ms);
  bench::record_cpu_share(row, result.cpu_seconds, result.wall_seconds);
  row.peak_resident_bytes = result.peak_resident_bytes;
  row.peak_device_bytes = result.peak_device_bytes;
  row.repeats = 1;
  point.batch_ms = result.batch_ms;
  point.part_ms = result.part_ms;
  bench::record_parts(row, result.part_ms);
  point.batch_repeat.assign(result.batch_ms.size(), 0);
  point.details["min_ms"] = result.summary.min_ms;
  point.details["max_ms"] = result.summary.max_ms;
  point.details["loss"] = result.loss;
  return point;
}

// What the point ran with and on: its inputs, settings, the machine and the GPU.
void add_details(io::BenchPoint& point, const bench::PointOptions& o,
                 const bench::PointResult& result, const std::vector<std::string>& na) {
  auto& details = point.details;
  details["not_applicable"] = core::join(na);
  // a model that makes its own batches: the shapes of one, by input
  details["input_shape"] =
      o.example_batch ? example_shapes(o.example_batch(1)) : core::shape_string(o.input_shape);
  details["classes"] = o.classes;
  if (o.device.is_cuda()) details["peak_device_reserved_bytes"] = result.peak_device_reserved_bytes;
  for (const auto& [name, value] : bench::machine_state()) details[name] = value;
  for (const auto& [name, value] : core::device_settings_in_force()) details[name] = value;
  for (const auto& [name, value] : core::gpu_facts(o.device)) details[name] = value;
  details["memory_format"] = std::string(o.channels_last ? "channels_last" : "contiguous");
  details["cuda_graphs"] = o.cuda_graphs;
}

// DLBS's sampling frequency at monitor.frequency 0.1: ten samples a second.
constexpr std::chrono::milliseconds kSampleInterval(100);

// The monitor's series, and their summary among the details: the mean CPU share and GPU
// utilisation, the largest resident and GPU memory.
void add_resources(io::BenchPoint& point, const core::ResourceSeries& series) {
  point.resources = series;
  const auto summary = [&](const char* name, const char* detail, bool largest) {
    const auto it = series.find(name);
    if (it == series.end() || it->second.empty()) return;
    point.details[detail] = largest ? core::series_max(it->second) : core::series_mean(it->second);
  };
  summary("cpu_percent", "cpu_percent_mean", false);
  summary("resident_mb", "resident_mb_max", true);
  summary("gpu_percent", "gpu_percent_mean", false);
  summary("gpu_memory_mb", "gpu_memory_mb_max", true);
}

// How a failed point's error is classified: the exception's type first, then its message.
std::string failure_kind_of(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) || dynamic_cast<const c10::OutOfMemoryError*>(&e) ||
      dynamic_cast<const core::OutOfMemory*>(&e)) {
    return "oom";
  }
  return bench::failure_kind(core::describe_exception(e));
}

std::string text_or_default(const bench::Point& point, const std::string& name) {
  const auto it = point.find(name);
  if (it != point.end()) return bench::value_text(it->second);
  return bench::value_text(bench::find_parameter(name)->default_value);
}

}  // namespace

MeasuredPoint measure_point(const BenchRequest& request) {
  const std::string model_id = bench::param_text(request.point, "model");
  if (model_id.empty()) {
    throw core::UsageError(
        "engine bench needs a model (engine bench --model mlp, see engine models) or a sweep "
        "script (engine bench scripts/bench/quick.lua)");
  }
  MeasuredPoint measured;
  auto& o = measured.options;
  o = bench::point_options(request.point);
  o.profile_path = request.profile_path;
  o.group = request.group;
  if (request.group) o.device = request.group->device();  // cuda: this machine's GPU LOCAL_RANK
  core::apply_device_settings(bench::point_device_settings(request.point));
  measured.not_applicable = bench::not_applicable(request.point, o);
  core::seed_everything(o.seed);
  lua::Session session(request.lua);
  auto model = session.bench_model(model_id);
  std::string warning;
  if (!model.unsupplied_arguments.empty()) {
    warning = model_id + ": " + model.unsupplied_arguments +
              " takes arguments and engine bench built it with none, so each is what init "
              "makes of nil; to time the model a training script builds, run engine bench "
              "SCRIPT.lua";
    core::log::warn("{}", warning);
  }
  complete_from_model(o, model, model_id);
  core::ResourceMonitor monitor(kSampleInterval, core::gpu_pci_bus_id(o.device));
  const auto result = bench::run_point(model.model, o);
  const auto resources = monitor.stop();
  measured.point = measured_row(model_id, o, result, request);
  add_details(measured.point, o, result, measured.not_applicable);
  add_resources(measured.point, resources);
  if (!warning.empty()) measured.point.details["warning"] = warning;
  return measured;
}

MeasuredPoint measure_script_step(const RunRequest& request, const ScriptStep& step) {
  RunContext context(request, CheckpointUse::kWeights);
  MeasuredPoint measured;
  auto& o = measured.options;
  o.batches = step.batches;
  o.warmup_batches = step.warmup_batches;
  o.data.real = step.real_data;
  o.seed = context.seed();
  o.profile_path = step.profile_path;
  core::ResourceMonitor monitor(kSampleInterval, core::gpu_pci_bus_id(context.spec().device));
  const auto result = bench::run_script_step(context.spec(), o);
  const auto resources = monitor.stop();
  BenchRequest as_point;
  as_point.threads = request.threads;
  measured.point = measured_row(context.script().name(), o, result, as_point);
  add_details(measured.point, o, result, {});
  add_resources(measured.point, resources);
  auto& details = measured.point.details;
  details.erase("classes");  // the script's model says its own
  details["script"] = request.script;
  details["optimizer"] = context.spec().optimizer_name;
  details["set"] = core::join(request.overrides);
  details["data"] = std::string(step.real_data ? "real" : "synthetic");
  return measured;
}

io::BenchPoint failed_point(const std::exception& e, const bench::Point& point) {
  io::BenchPoint failed;
  failed.row.status = core::PointStatus::kFailed;
  failed.row.error_kind = failure_kind_of(e);
  failed.row.reason = bench::first_line(core::describe_exception(e));
  failed.details["error"] = core::describe_exception(e);
  failed.row.model = bench::param_text(point, "model");
  failed.row.phase = text_or_default(point, "phase");
  failed.row.device = text_or_default(point, "device");
  failed.row.dtype = text_or_default(point, "dtype");
  failed.row.batch_size =
      point.count("batch_size")
          ? bench::param_int(point, "batch_size")
          : std::get<int64_t>(bench::find_parameter("batch_size")->default_value);
  return failed;
}

io::BenchPoint run_point_in_process(const bench::Point& point, const lua::RuntimeOptions& lua) {
  try {
    const int64_t world_size = bench::param_int(point, "world_size");
    if (world_size > 1) {
      throw core::UsageError("world_size " + std::to_string(world_size) +
                             " starts processes of its own: run the sweep with --isolate process");
    }
    BenchRequest request;
    request.point = point;
    request.lua = lua;
    const auto choice =
        distributed::choose_threads(static_cast<int>(bench::param_int(point, "threads")),
                                    distributed::World{}, distributed::process_environment());
    request.threads = core::configure_threads(choice.threads);
    return measure_point(request).point;
  } catch (const std::exception& e) {
    return failed_point(e, point);
  }
}

}  // namespace engine::run
