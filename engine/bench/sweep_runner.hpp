// Runs the points of a sweep, each in a fresh child process by default, into a benchmark file:
// failures, crashes and timeouts are recorded with their reasons and the sweep goes on; a point
// that ran out of memory makes the larger batches of the same point `skipped`; points already
// in the file are kept (--rerun); progress goes to the console as each point starts and ends.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/bench/sweep.hpp"
#include "engine/bench/timing.hpp"
#include "engine/io/bench_file.hpp"

namespace engine::bench {

enum class Rerun { kNever, kFailed, kAlways };
Rerun parse_rerun(const std::string& name);  // never | failed | always
enum class Isolation { kProcess, kNone };
Isolation parse_isolation(const std::string& name);  // process | none
// A plan that cannot run under this isolation: a data-parallel point (world_size > 1) or one
// with a launcher starts processes of its own, so not inside the sweep's process; and a
// launcher that does not parse (a quote that does not close). UsageError naming it.
void check_isolation(const std::vector<PlannedPoint>& plan, Isolation isolation);

// The row's timing columns from a summary of its batches (one rank's, for a row whose
// world_size is set: its throughput is then the world's).
void record_summary(io::BenchRow& row, const Summary& summary);
// The pipelined figure (PointResult::pipelined_ms) and the throughput it gives.
void record_pipelined(io::BenchRow& row, double pipelined_ms);
// A CPU point's share of its threads' time (cpu_share) and whether it was starved.
void record_cpu_share(io::BenchRow& row, double cpu_seconds, double wall_seconds);
// The row's part columns (data_ms, forward_ms, backward_ms, optimizer_ms): each part's mean;
// parts not measured stay NaN.
void record_parts(io::BenchRow& row, const std::map<std::string, std::vector<double>>& part_ms);
// "oom" when an error message says that memory ran out (libtorch's allocators, std::bad_alloc,
// LuaJIT, CUDA), "error" for any other.
std::string failure_kind(const std::string& message);
// The first line of a message, without libtorch's backtrace.
std::string first_line(const std::string& message);

struct RunnerOptions {
  Isolation isolation = Isolation::kProcess;
  // The command that runs one point from flags ({engine, "bench"}); each point adds its flags,
  // then child_flags, then --result FILE.
  std::vector<std::string> child_command;
  std::vector<std::string> child_flags;
  std::string scratch_dir;  // where the children write their results
  // isolation none: runs a point in this process and returns its result (status failed and
  // the message when it fails).
  std::function<io::BenchPoint(const Point&)> run_in_process;
  double timeout_seconds = 0;
  int64_t max_memory_bytes = 0;
  int repeat = 1;
  double unstable_spread = 0.05;
  Rerun rerun = Rerun::kNever;
  bool oom_skip = true;
  std::vector<std::string> oom_family = kDefaultOomFamily;  // bench::oom_family(spec)
  std::FILE* out = stdout;
  std::function<bool()> interrupted;  // polled between points and while a child runs
  // Called with each point that ran (plan index, its record) once the file has it.
  std::function<void(size_t, const io::BenchPoint&)> after_point;
};

struct SweepOutcome {
  std::vector<io::BenchRow> rows;  // one per planned point, in plan order (run or kept)
  // per row: the parameters that vary across the plan and have no column of their own
  std::vector<std::string> settings;
  int64_t ran = 0, kept = 0;
  bool interrupted = false;
};

SweepOutcome run_sweep(const std::vector<PlannedPoint>& plan, io::BenchFile& file,
                       const RunnerOptions& options);
// How many of the plan's points run_sweep would run: the active ones the file does not keep
// (--rerun), and those it keeps with fewer repeats than --repeat.
int64_t points_to_run(const std::vector<PlannedPoint>& plan, io::BenchFile& file,
                      const RunnerOptions& options);

// Each ok data-parallel row's scaling_efficiency: its throughput over world_size times that of
// the one-process point with the same other parameters and the same batch per rank (weak
// scaling), else the same global batch (strong scaling); NaN when the sweep has neither.
// rows[i] is plan[i]'s.
void add_scaling_efficiency(std::vector<io::BenchRow>& rows, const std::vector<PlannedPoint>& plan);

}  // namespace engine::bench
