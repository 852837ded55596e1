// engine bench SWEEP.lua: expands a sweep script into points (--dry-run prints them), runs each
// in a child process into one benchmark file, and prints a table at the end.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

#include "engine/bench/machine.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/bench/point_process.hpp"
#include "engine/bench/sweep_runner.hpp"
#include "engine/bench/sweep_tables.hpp"
#include "engine/cli/bench_dlbs.hpp"
#include "engine/cli/bench_sweep.hpp"
#include "engine/cli/common.hpp"
#include "engine/cli/dlbs_flags.hpp"
#include "engine/core/child_process.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/format.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/statuses.hpp"
#include "engine/run/bench_point.hpp"

namespace engine::cli {
namespace {

namespace fs = std::filesystem;

// "90", "90s", "5m", "1h" as seconds.
double duration_flag(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit(end ? end : "");
  double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (end == text.c_str() || scale == 0 || !(value > 0)) {
    throw core::UsageError("--timeout takes seconds (90, 90s, 5m, 1h), got '" + text + "'");
  }
  return value * scale;
}

// A folder for the children's result files, removed when the sweep ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "engine-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw core::IoError("cannot make a temporary folder in /tmp");
    path_ = pattern;
  }
  ~ScratchDir() { core::remove_tree_quietly(path_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

cxxopts::Options sweep_options() {
  cxxopts::Options options("engine bench SWEEP.lua|CONFIG.json",
                           "Run a benchmark sweep: every point of the script, or of a DLBS "
                           "config as DLBS plans it, each in a fresh process, into one benchmark "
                           "file (docs/benchmarks.md).");
  options.add_options()("dry-run", "print the expanded points and run nothing")(
      "set", "name=value: a parameter everywhere; on a variable, the variable reduced to it")(
      "var", "name=a,b,c: a variable's values (a new variable loops innermost)")(
      "P",
      "DLBS's -Pname=value: a parameter under the variables and extensions (exp.* names, "
      "JSON values)")("V", "DLBS's -Vname=[a,b]: a variable's values (exp.* names, JSON values)")(
      "E", "DLBS's -E'{\"condition\": ..., \"parameters\": ...}': an extension (CONFIG.json only)")(
      "out", "root folder of the results: OUT/bench/<sweep>/<time>.h5",
      cxxopts::value<std::string>()->default_value("runs"))(
      "file", "the benchmark file to write or continue (default: the sweep's latest under --out)",
      cxxopts::value<std::string>())("fresh", "start a new file instead of continuing the latest")(
      "rerun", "points already in the file: never (run only the rest), failed, always",
      cxxopts::value<std::string>()->default_value("never"))(
      "isolate", "process (each point in a fresh child process) or none",
      cxxopts::value<std::string>()->default_value("process"))(
      "timeout", "a point running longer is killed and recorded as timeout (90, 5m)",
      cxxopts::value<std::string>())(
      "max_memory", "caps each point's address space (2G, 512M): its allocations fail beyond",
      cxxopts::value<std::string>())(
      "repeat", "runs each point R times in fresh processes and records the spread",
      cxxopts::value<int>()->default_value("1"))(
      "unstable_spread", "repeats whose p50s spread more than this fraction flag the point",
      cxxopts::value<double>()->default_value("0.05"))(
      "no-oom-skip", "run larger batches even after a smaller one ran out of memory")(
      "allocator", core::kAllocatorHelp, cxxopts::value<std::string>()->default_value("caching"))(
      "h,help", "show this help");
  return options;
}

// How the points run: isolation, reruns, limits, repeats (the child command comes later).
bench::RunnerOptions runner_options(const cxxopts::ParseResult& flags) {
  bench::RunnerOptions run;
  run.isolation = bench::parse_isolation(flags["isolate"].as<std::string>());
  run.rerun = bench::parse_rerun(flags["rerun"].as<std::string>());
  run.oom_skip = !flags.count("no-oom-skip");
  run.repeat = flags["repeat"].as<int>();
  if (run.repeat < 1) {
    throw core::UsageError("--repeat must be 1 or more, got " + std::to_string(run.repeat));
  }
  run.unstable_spread = flags["unstable_spread"].as<double>();
  if (flags.count("timeout"))
    run.timeout_seconds = duration_flag(flags["timeout"].as<std::string>());
  if (flags.count("max_memory")) {
    run.max_memory_bytes =
        bench::parse_memory_size(flags["max_memory"].as<std::string>(), "--max_memory");
  }
  if (run.isolation == bench::Isolation::kNone &&
      (run.timeout_seconds > 0 || run.max_memory_bytes > 0 || run.repeat > 1)) {
    throw core::UsageError(
        "--timeout, --max_memory and --repeat need --isolate process: a point "
        "run in this process cannot be killed, capped or started fresh");
  }
  if (flags.count("allocator")) {
    run.child_flags = {"--allocator", flags["allocator"].as<std::string>()};
  }
  run.child_command = {core::executable_path(), "bench"};
  // a module file's point runs in a session whose require path starts at the file's folder
  run.run_in_process = [](const bench::Point& point) {
    return run::run_point_in_process(point, session_options(bench::param_text(point, "model")));
  };
  return run;
}

// --file, else the sweep's latest file under --out (unless --fresh), else a new one (its name
// reserved by an empty file). `continuing`: the file was there before.
struct BenchFileChoice {
  std::string path;
  bool continuing = false;
};

BenchFileChoice bench_file_path(const cxxopts::ParseResult& flags, const std::string& sweep) {
  const std::string root = flags["out"].as<std::string>();
  BenchFileChoice choice;
  if (flags.count("file")) choice.path = flags["file"].as<std::string>();
  if (choice.path.empty() && !flags.count("fresh")) {
    choice.path = io::BenchFile::latest_path(root, sweep);
  }
  choice.continuing = !choice.path.empty() && fs::exists(choice.path);
  if (choice.path.empty()) choice.path = io::BenchFile::new_path(root, sweep);
  return choice;
}

// Runs the plan's points into the file, prints the results, and ends as the sweep did.
int run_sweep_and_report(const std::vector<bench::PlannedPoint>& plan, io::BenchFile& file,
                         bench::RunnerOptions& run) {
  ScratchDir scratch;
  run.scratch_dir = scratch.path();
  core::InterruptScope interrupts(
      "\nstopping the sweep; run it again to go on from where it stopped (press Ctrl-C "
      "again to quit now)\n");
  run.interrupted = [] { return core::pending_interrupt() != 0; };
  bench::SweepOutcome outcome;
  try {
    outcome = bench::run_sweep(plan, file, run);
  } catch (const std::exception& e) {
    file.finish(core::FileStatus::kFailed, core::describe_exception(e));
    throw;
  }
  std::printf("\n%s", bench::results_table(outcome.rows, outcome.settings).c_str());
  file.finish(outcome.interrupted ? core::FileStatus::kInterrupted : core::FileStatus::kCompleted);
  std::printf("%lld run, %lld kept from the file; results in %s\n",
              static_cast<long long>(outcome.ran), static_cast<long long>(outcome.kept),
              file.path().c_str());
  std::printf(
      "show it: engine report %s  (pivot: --rows model --cols batch_size; chart: --plot "
      "chart.svg)\n",
      file.path().c_str());
  if (outcome.interrupted) {
    throw core::Interrupted("the sweep was interrupted; run it again to continue it",
                            core::pending_interrupt() ? core::pending_interrupt() : 2);
  }
  return 0;
}

// What the points time: "100 batches after 1 warm-up", each count the points use, fewest first.
std::string batch_counts(const std::vector<bench::PlannedPoint>& plan) {
  std::set<std::pair<int64_t, int64_t>> counts;
  for (const auto& p : plan) {
    if (p.active) {
      counts.emplace(bench::param_int(p.params, "num_batches"),
                     bench::param_int(p.params, "num_warmup_batches"));
    }
  }
  std::vector<std::string> texts;
  for (const auto& [batches, warmup] : counts) {
    texts.push_back(std::to_string(batches) + " batches after " + std::to_string(warmup) +
                    " warm-up");
  }
  return core::join(texts, ", ");
}

// The points of a Lua sweep, or of a DLBS config (with the names it sets that the engine does
// not use, said once).
struct SweepPlan {
  std::unique_ptr<lua::Session> session;  // a Lua sweep's functions run in it: kept to the end
  bench::SweepSpec spec;
  std::vector<bench::PlannedPoint> plan;
  std::string not_used;
};

SweepPlan plan_sweep(const std::string& script, const std::vector<std::string>& sets,
                     const std::vector<std::string>& vars, const std::vector<std::string>& params,
                     const std::vector<std::string>& variables,
                     const std::vector<std::string>& extensions) {
  SweepPlan out;
  if (is_dlbs_config(script)) {
    if (!sets.empty() || !vars.empty()) {
      throw core::UsageError(
          "--set and --var change a Lua sweep; a DLBS config takes DLBS's -P "
          "name=value and -V name=[values]");
    }
    DlbsSweep dlbs = plan_dlbs_config(script, params, variables, extensions);
    out.spec.name = dlbs.name;
    out.spec.description = "DLBS config " + script;
    out.plan = std::move(dlbs.plan);
    if (!dlbs.not_used.empty()) {
      out.not_used =
          "not used by the engine: " +
          core::join(std::vector<std::string>(dlbs.not_used.begin(), dlbs.not_used.end()), ", ") +
          "\n";
    }
    return out;
  }
  if (!extensions.empty()) {
    throw core::UsageError(
        "-E takes an extension of a DLBS config (CONFIG.json); a Lua sweep "
        "has extensions = {...}");
  }
  bench::Overrides overrides;
  for (const auto& a : sets) overrides.set.push_back(bench::split_assignment(a, "--set"));
  for (const auto& a : vars) overrides.var.push_back(bench::split_assignment(a, "--var"));
  std::vector<std::string> not_used;
  add_dlbs_overrides(params, variables, overrides, not_used);
  if (!not_used.empty())
    out.not_used = "not used by the engine: " + core::join(not_used, ", ") + "\n";
  out.session = make_session(script);
  out.spec = out.session->sweep(script);
  out.plan = bench::expand(out.spec, bench::point_schema(), overrides);
  return out;
}

}  // namespace

int bench_sweep(const std::vector<std::string>& args) {
  const std::string script = args.front();
  auto options = sweep_options();
  std::vector<std::string> rest(args.begin() + 1, args.end());
  const auto sets = take_repeated(rest, "--set");
  const auto vars = take_repeated(rest, "--var");
  const auto dlbs_params = take_repeated(rest, "-P");
  const auto dlbs_vars = take_repeated(rest, "-V");
  const auto dlbs_extensions = take_repeated(rest, "-E");
  auto flags = parse(options, rest);
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  check_script(script);
  bench::RunnerOptions run = runner_options(flags);

  const SweepPlan sweep = plan_sweep(script, sets, vars, dlbs_params, dlbs_vars, dlbs_extensions);
  const auto& spec = sweep.spec;
  const auto& plan = sweep.plan;
  bench::check_isolation(plan, run.isolation);
  run.oom_family = bench::oom_family(spec);
  if (flags.count("dry-run")) {
    std::printf("sweep %s (%s): timing %s\n%s%s", spec.name.c_str(), script.c_str(),
                batch_counts(plan).c_str(), sweep.not_used.c_str(),
                bench::plan_table(plan).c_str());
    return 0;
  }
  if (run.max_memory_bytes > 0 && run.timeout_seconds == 0) {
    std::printf(
        "note: --max_memory without --timeout: OpenBLAS waits forever for a buffer it "
        "cannot map, so a point may hang instead of failing; give --timeout too\n");
  }

  const auto [path, continuing] = bench_file_path(flags, spec.name);
  io::BenchInfo info;
  info.name = spec.name;
  info.description = spec.description;
  info.command = "engine bench " + core::join(args, " ");
  info.script_path = script;
  info.script_text = read_file(script);
  info.plan_text = bench::plan_text(plan);
  for (const auto& [name, value] : bench::machine_description()) info.machine[name] = value;
  io::BenchFile file(path, info);
  run.after_point = dlbs_log_writer(plan, path, run.out);
  size_t active = 0;
  for (const auto& p : plan) active += p.active ? 1 : 0;
  // what will run: not the points the file keeps (--rerun), but those short of --repeat
  const auto to_run = bench::points_to_run(plan, file, run);
  std::printf("sweep %s: %zu points (%lld to run, %zu inactive), timing %s; %s %s\n%s",
              spec.name.c_str(), plan.size(), static_cast<long long>(to_run), plan.size() - active,
              batch_counts(plan).c_str(), continuing ? "continuing" : "writing", path.c_str(),
              sweep.not_used.c_str());
  std::fflush(stdout);
  return run_sweep_and_report(plan, file, run);
}

}  // namespace engine::cli
