// engine bench: one benchmark point from DLBS-style flags (engine bench --model ID ...), or a
// sweep from a Lua script (engine bench SWEEP.lua, see bench_sweep.cpp).
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "engine/bench/machine.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/bench/point_options.hpp"
#include "engine/bench/sweep_tables.hpp"
#include "engine/cli/bench_dlbs.hpp"
#include "engine/cli/bench_sweep.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/cli/distributed.hpp"
#include "engine/core/device_settings.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/statuses.hpp"
#include "engine/distributed/group.hpp"
#include "engine/io/bench_file.hpp"
#include "engine/lua/session.hpp"
#include "engine/run/bench_point.hpp"

namespace engine::cli {
namespace {

// The flags that take true or false: the boolean parameters and DLBS's phase aliases.
std::set<std::string> boolean_flags() {
  std::set<std::string> flags;
  for (const auto& parameter : bench::point_parameters()) {
    if (bench::takes_boolean(parameter)) flags.insert("--" + parameter.name);
  }
  for (const auto& alias : bench::phase_aliases()) flags.insert("--" + alias.flag);
  return flags;
}

// DLBS writes "--forward_only false" as two words; cxxopts takes an implicit value only as
// "--forward_only=false", so the two words are joined first.
std::vector<std::string> with_bool_values(std::vector<std::string> args) {
  const auto flags = boolean_flags();
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (flags.count(args[i]) && core::is_setting_bool(args[i + 1])) {
      args[i] += "=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  }
  return args;
}

// "samples per batch [default 16; DLBS: exp.replica_batch]"
std::string flag_help(const bench::Parameter& parameter) {
  std::string help = parameter.help;
  std::vector<std::string> notes;
  const std::string fallback = bench::value_text(parameter.default_value);
  // (a shared help text that says its default already is left as it is)
  if (!fallback.empty() && help.find("default") == std::string::npos) {
    notes.push_back("default " + fallback);
  }
  if (!parameter.dlbs.empty()) notes.push_back("DLBS: " + parameter.dlbs);
  if (!notes.empty()) help += " [" + core::join(notes, "; ") + "]";
  return help;
}

// Every parameter's flag (bench/parameters.hpp) as text, read back by point_from_flags; the
// defaults stay in the table, so a flag not given leaves the parameter unset.
void add_point_flags(cxxopts::Options& options) {
  auto add = options.add_options();
  for (const auto& parameter : bench::point_parameters()) {
    if (!bench::has_own_flag(parameter)) continue;  // world_size: --nproc, below
    auto value = cxxopts::value<std::string>();
    if (bench::takes_boolean(parameter)) value->implicit_value("true");
    add(parameter.name, flag_help(parameter), value);
  }
  for (const auto& alias : bench::phase_aliases()) {
    add(alias.flag, alias.help, cxxopts::value<std::string>()->implicit_value("true"));
  }
  add("profile", "write a Chrome trace (chrome://tracing, Perfetto) of the timed batches here",
      cxxopts::value<std::string>())(
      "out", "also write the point to a benchmark file under OUT/bench/<model>/",
      cxxopts::value<std::string>())(
      "result",
      "write the point's result, or its failure, to this file (what a sweep's child "
      "processes do)",
      cxxopts::value<std::string>())(
      "json", "print the result as one JSON line (as ../shared/bench's references do)")(
      "local_rank",
      "this process's place on its machine, as torch.distributed.launch passes it (DLBS's "
      "multi-GPU launcher): LOCAL_RANK",
      cxxopts::value<int>())("dist_backend",
                             "nccl or gloo, as DLBS passes it: checked against the device (the "
                             "engine takes NCCL on CUDA, Gloo on the CPU)",
                             cxxopts::value<std::string>())("h,help", "show this help");
  add_distributed_flags(options);  // --nproc N: a data-parallel point of N processes
}

// The point the flags describe: each parameter given, read as its type (a UsageError names the
// flag), DLBS's phase aliases as the phase, --nproc as world_size.
bench::Point point_from_flags(const cxxopts::ParseResult& flags) {
  bench::Point point;
  for (const auto& parameter : bench::point_parameters()) {
    const std::string& name = parameter.name;
    if (!bench::has_own_flag(parameter) || !flags.count(name)) continue;
    point[name] = bench::parse_parameter(parameter, flags[name].as<std::string>());
  }
  for (const auto& alias : bench::phase_aliases()) {
    if (!flags.count(alias.flag)) continue;
    const std::string flag = "--" + alias.flag;
    if (core::parse_setting_bool(flag, flags[alias.flag].as<std::string>())) {
      point["phase"] = alias.phase;
    }
  }
  if (flags.count("nproc")) point["world_size"] = int64_t{flags["nproc"].as<int>()};
  // DLBS: a dataset's folder means real data, unless --data says otherwise
  if (flags.count("data_dir") && !flags.count("data") &&
      !flags["data_dir"].as<std::string>().empty()) {
    point["data"] = std::string("real");
  }
  return point;
}

// DLBS's multi-GPU launch (torch.distributed.launch): --local_rank K on the command line and
// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT in the environment, which the engine's world
// reads as torchrun's. --local_rank becomes LOCAL_RANK; --dist_backend must be the one the
// engine takes for the point's device.
void apply_launcher_flags(const cxxopts::ParseResult& flags, const bench::Point& point) {
  if (flags.count("local_rank")) {
    const int local_rank = flags["local_rank"].as<int>();
    if (local_rank < 0) {
      throw core::UsageError("--local_rank must be 0 or more, got " + std::to_string(local_rank));
    }
    const char* set = std::getenv("LOCAL_RANK");
    if (set && std::string(set) != std::to_string(local_rank)) {
      throw core::UsageError("--local_rank " + std::to_string(local_rank) +
                             " disagrees with LOCAL_RANK=" + set + " in the environment");
    }
    setenv("LOCAL_RANK", std::to_string(local_rank).c_str(), 1);
  }
  if (!flags.count("dist_backend")) return;
  const std::string backend = flags["dist_backend"].as<std::string>();
  if (backend != "nccl" && backend != "gloo") {
    throw core::UsageError("--dist_backend must be nccl or gloo, got '" + backend + "'");
  }
  const bool cuda = bench::point_device(point).is_cuda();
  const bool several = point.count("world_size") ? bench::param_int(point, "world_size") > 1
                                                 : std::getenv("WORLD_SIZE") != nullptr;
  if (several && (backend == "nccl") != cuda) {
    throw core::UsageError("--dist_backend " + backend + " with --device " +
                           (cuda ? std::string("cuda") : std::string("cpu")) +
                           ": the engine's ranks talk through NCCL on CUDA and Gloo on the CPU; "
                           "give --dist_backend " +
                           (cuda ? "nccl" : "gloo") + " or leave it out");
  }
}

// The threads the point asks for (0: all cores), before a launcher's share.
int requested_threads(const bench::Point& point) {
  return static_cast<int>(bench::param_int(point, "threads"));
}

void print_json(const run::MeasuredPoint& run) {
  const auto& r = run.point.row;
  const auto found = run.point.details.find("peak_device_reserved_bytes");
  const int64_t reserved = found == run.point.details.end() ? 0 : std::get<int64_t>(found->second);
  nlohmann::ordered_json line{{"impl", "engine"}};
  for (const auto& [key, value] : io::json_fields(r)) {
    std::visit(
        [&, &key = key](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
            line[key] = nullptr;
          } else {
            line[key] = v;
          }
        },
        value);
  }
  const auto min_ms = io::json_figure(std::get<double>(run.point.details.at("min_ms")));
  line["min_ms"] = min_ms ? nlohmann::json(*min_ms) : nlohmann::json(nullptr);
  line["peak_device_reserved_bytes"] = reserved;
  std::printf("%s\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// The resource monitor's summary: "resources (12 samples): cpu 196% of a core (mean), resident
// 292 MiB (max); gpu 87% (mean), gpu memory 10342 MiB (max)".
void print_resources(const io::BenchPoint& point) {
  const auto figure = [&](const char* name) {
    const auto it = point.details.find(name);
    return it == point.details.end() ? -1.0 : std::get<double>(it->second);
  };
  const auto samples = point.resources.find("seconds");
  if (samples == point.resources.end() || figure("cpu_percent_mean") < 0) return;
  std::printf("  resources (%zu sample%s): cpu %.0f%% of a core (mean), resident %.0f MiB (max)",
              samples->second.size(), samples->second.size() == 1 ? "" : "s",
              figure("cpu_percent_mean"), figure("resident_mb_max"));
  if (figure("gpu_percent_mean") >= 0) {
    std::printf("; gpu %.0f%% (mean), gpu memory %.0f MiB (max)", figure("gpu_percent_mean"),
                figure("gpu_memory_mb_max"));
  }
  std::printf("\n");
}

void print_text(const run::MeasuredPoint& run) {
  const auto& r = run.point.row;
  const auto loss = std::get<std::string>(run.point.details.at("loss"));
  std::printf("%s, %s, batch %lld, %s, %s, %lld thread%s%s\n", r.model.c_str(), r.phase.c_str(),
              static_cast<long long>(r.batch_size), r.dtype.c_str(), r.device.c_str(),
              static_cast<long long>(r.threads), r.threads == 1 ? "" : "s",
              loss.empty() ? "" : (", " + loss).c_str());
  std::printf("  %lld timed batches: mean %.3f ms (std %.3f), p50 %.3f, %smin %.3f%s\n",
              static_cast<long long>(r.num_batches), r.mean_ms, r.std_ms, r.p50_ms,
              bench::tail_percentiles_text(r.p90_ms, r.p99_ms).c_str(),
              std::get<double>(run.point.details.at("min_ms")),
              bench::percentiles_note(r.num_batches).c_str());
  if (r.world_size > 1) {
    std::printf("  %lld processes of batch %lld each (times of rank 0): %.1f samples/s each\n",
                static_cast<long long>(r.world_size), static_cast<long long>(r.batch_size),
                r.throughput_per_rank);
  }
  std::printf("  %.1f samples/s (from the mean), %.1f (from p50); peak memory %.0f MiB\n",
              r.throughput, r.throughput_p50,
              static_cast<double>(r.peak_resident_bytes) / (1 << 20));
  if (r.starved) {
    std::printf(
        "  starved: the process got %.0f%% of its %lld thread%s' time over the timed "
        "batches (another program's load?): these times are the machine's, not the "
        "engine's\n",
        100.0 * r.cpu_share, static_cast<long long>(r.threads), r.threads == 1 ? "" : "s");
  }
  if (r.device != "cpu" && std::isfinite(r.pipelined_ms)) {  // on the CPU it is the mean
    std::printf("  pipelined (no wait between batches): %.3f ms a batch, %.1f samples/s\n",
                r.pipelined_ms, r.throughput_pipelined);
  }
  if (r.peak_device_bytes > 0) {
    std::printf("  peak device memory %.0f MiB\n",
                static_cast<double>(r.peak_device_bytes) / (1 << 20));
  }
  const auto parts = bench::parts_text(r);
  if (!parts.empty()) std::printf("  parts: %s\n", parts.c_str());
  print_resources(run.point);
  if (const auto script = run.point.details.find("script"); script != run.point.details.end()) {
    const auto& d = run.point.details;
    const auto set = std::get<std::string>(d.at("set"));
    std::printf("  the training step of %s: its model, loss and %s optimizer, %s data%s%s\n",
                std::get<std::string>(script->second).c_str(),
                std::get<std::string>(d.at("optimizer")).c_str(),
                std::get<std::string>(d.at("data")).c_str(), set.empty() ? "" : "; --set ",
                set.c_str());
  }
  if (!run.not_applicable.empty()) {
    std::printf("  n/a here: %s\n", core::join(run.not_applicable).c_str());
  }
}

void write_single(const std::string& path, const io::BenchPoint& point, const std::string& command,
                  bool with_machine) {
  io::BenchInfo info;
  info.name = point.row.model;
  info.command = command;
  if (with_machine) {
    for (const auto& [name, value] : bench::machine_description()) info.machine[name] = value;
  }
  io::BenchFile file(path, info);
  io::BenchPoint stored = point;
  stored.row.point = file.point_count();
  file.write_point(stored);
  file.finish(point.row.status == core::PointStatus::kOk ? core::FileStatus::kCompleted
                                                         : core::FileStatus::kFailed);
}

// Writes the failure where the sweep reads why the point failed; the error still goes to stderr.
void write_failure(const std::string& result_path, const std::exception& e,
                   const bench::Point& point, int threads, const std::string& command) {
  io::BenchPoint failed = run::failed_point(e, point);
  failed.row.threads = threads;
  write_single(result_path, failed, command, false);
}

void report(const cxxopts::ParseResult& flags, const run::MeasuredPoint& run,
            const std::string& command) {
  if (flags.count("out")) {
    const auto model = std::filesystem::path(run.point.row.model).stem().string();
    const auto path = io::BenchFile::new_path(flags["out"].as<std::string>(), model);
    write_single(path, run.point, command, true);
    // with --json, stdout holds the one JSON line and nothing else
    std::fprintf(flags.count("json") ? stderr : stdout,
                 "  written to %s\n  show it: engine report %s\n", path.c_str(), path.c_str());
  }
  if (flags.count("json")) {
    print_json(run);
  } else {
    print_text(run);
  }
  if (!run.options.profile_path.empty()) {
    std::fprintf(flags.count("json") ? stderr : stdout,
                 "  profile: %s (open in chrome://tracing or ui.perfetto.dev)\n",
                 run.options.profile_path.c_str());
  }
}

int bench_point(const std::vector<std::string>& args) {
  cxxopts::Options options("engine bench",
                           "Time one benchmark point: a model's training step, forward pass or "
                           "the loader alone (DLBS's flag names), or run a sweep: engine bench "
                           "SWEEP.lua or a DLBS config, engine bench CONFIG.json (engine bench "
                           "SWEEP.lua --help).");
  add_point_flags(options);
  auto flags = parse(options, with_bool_values(args));
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  run::BenchRequest request;
  request.point = point_from_flags(flags);
  apply_launcher_flags(flags, request.point);
  if (auto code = launch_if_asked(flags, "bench", args, requested_threads(request.point))) {
    return *code;
  }
  request.threads = apply_threads(requested_threads(request.point), distributed::World{});
  request.lua = session_options(bench::param_text(request.point, "model"));
  if (flags.count("profile")) request.profile_path = flags["profile"].as<std::string>();
  const std::string result_path = flags.count("result") ? flags["result"].as<std::string>() : "";
  const std::string command = "engine bench " + core::join(args, " ");
  // a data-parallel point (--nproc, or a scheduler's RANK / WORLD_SIZE): rank 0 reports it
  const distributed::World world = world_of(flags);
  std::unique_ptr<distributed::Group> group;
  run::MeasuredPoint measured;
  try {
    if (world.distributed()) {
      // the device alone: the options would query a CUDA device before the group picks it
      group = std::make_unique<distributed::Group>(world, bench::point_device(request.point));
      request.group = group.get();
      request.threads = apply_threads(requested_threads(request.point), group->world());
    }
    measured = run::measure_point(request);
  } catch (const std::exception& e) {
    if (!result_path.empty() && world.rank == 0) {
      write_failure(result_path, e, request.point, request.threads, command);
    }
    throw;
  }
  if (world.rank != 0) return 0;
  if (!result_path.empty()) write_single(result_path, measured.point, command, false);
  report(flags, measured, command);
  return 0;
}

}  // namespace

// engine bench SCRIPT.lua for a training script: the step engine train runs for it.
int bench_script(const std::vector<std::string>& args) {
  cxxopts::Options options("engine bench SCRIPT.lua",
                           "Time the training step of a training script: its own model(hp), "
                           "loss, optimizer and batch, with --set applied, stepped as engine "
                           "train steps it (docs/benchmarks.md).");
  options.add_options()("num_batches", "timed batches",
                        cxxopts::value<int64_t>()->default_value("20"))(
      "num_warmup_batches", "batches run first and not timed",
      cxxopts::value<int64_t>()->default_value("3"))(
      "data",
      "synthetic (the script's first training batch, fed every time) or real (each timed batch "
      "read through the script's pipeline)",
      cxxopts::value<std::string>()->default_value("synthetic"))(
      "profile", "write a Chrome trace of the timed batches here", cxxopts::value<std::string>())(
      "json", "print the result as one JSON line");
  const auto parsed = parse_script_command(options, args, "a training script");
  if (!parsed) return 0;
  const auto& flags = *parsed;
  auto request = run_request("engine bench", flags, args);
  run::ScriptStep step;
  step.batches = flags["num_batches"].as<int64_t>();
  step.warmup_batches = flags["num_warmup_batches"].as<int64_t>();
  step.real_data = bench::parse_data_kind(flags["data"].as<std::string>());
  if (flags.count("profile")) step.profile_path = flags["profile"].as<std::string>();
  const auto measured = run::measure_script_step(request, step);
  report(flags, measured, request.command);
  return 0;
}

int bench_command(const std::vector<std::string>& args) {
  // a first argument that is not a flag is a script: a sweep (Lua, or a DLBS config), or a
  // training script's step
  if (!args.empty() && args.front().rfind("-", 0) != 0) {
    std::error_code error;
    const bool training_script = std::filesystem::is_regular_file(args.front(), error) &&
                                 !is_dlbs_config(args.front()) &&
                                 !lua::is_sweep_text(read_file(args.front()));
    return training_script ? bench_script(args) : bench_sweep(args);
  }
  return bench_point(args);
}

}  // namespace engine::cli
