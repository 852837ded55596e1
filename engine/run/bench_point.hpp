// One benchmark point run in this process, from its parameters (bench/parameters.hpp): its model
// made in a Lua session, its options read by bench::point_options, its timing by bench::run_point,
// and the row and details a benchmark file stores. `engine bench --model ...` runs a point
// this way, and so does a sweep with --isolate none; a sweep's child process is the former.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "engine/bench/point.hpp"
#include "engine/bench/value.hpp"
#include "engine/io/bench_file.hpp"
#include "engine/lua/session.hpp"
#include "engine/run/run_context.hpp"

namespace engine::distributed {
class Group;
}

namespace engine::run {

struct BenchRequest {
  bench::Point point;  // the point's parameters; those it does not set take defaults
  // the session that makes the model: its require path starts at a module file's folder
  lua::RuntimeOptions lua;
  int threads = 1;                      // libtorch threads in use, recorded in the row
  std::string profile_path;             // non-empty: a Chrome trace of the timed batches goes there
  distributed::Group* group = nullptr;  // a data-parallel point's processes (rank's device)
};

struct MeasuredPoint {
  io::BenchPoint point;  // the row and details, as a benchmark file stores them
  bench::PointOptions options;
  std::vector<std::string> not_applicable;  // "cudnn_benchmark (no cuDNN on cpu)"
};

// Applies the point's device settings, seeds, makes the model and times the point. A point
// without a model, a model that does not say its input shape or classes (and the point does not
// either), and every error of bench::point_options and run_point are thrown.
MeasuredPoint measure_point(const BenchRequest& request);

// A point that failed with e: status failed, the kind of failure (oom by the exception's type,
// else by its message), the first line and the whole message; model, phase, device, dtype and
// batch_size from the point's parameters.
io::BenchPoint failed_point(const std::exception& e, const bench::Point& point);

// measure_point for a sweep run in this process: a failure comes back as failed_point's. A
// data-parallel point (world_size > 1) starts processes of its own and fails here.
io::BenchPoint run_point_in_process(const bench::Point& point, const lua::RuntimeOptions& lua);

// engine bench SCRIPT.lua: the training step of a training script's own run, built as engine
// train builds it (RunContext: the script's model(hp), loss, optimizer and data, --set applied,
// on the request's device, seeded alike) and timed by bench::run_script_step. The row's model
// is the script's name; its details name the script, the optimizer and the --set values.
struct ScriptStep {
  int64_t batches = 20, warmup_batches = 3;
  bool real_data = false;    // each timed batch read through the script's pipeline
  std::string profile_path;  // non-empty: a Chrome trace of the timed batches
};
MeasuredPoint measure_script_step(const RunRequest& request, const ScriptStep& step);

}  // namespace engine::run
