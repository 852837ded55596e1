#include "engine/bench/sweep_runner.hpp"
#include "engine/core/statuses.hpp"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "engine/bench/machine.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/bench/point_process.hpp"
#include "engine/bench/repeats.hpp"
#include "engine/bench/sweep_tables.hpp"
#include "engine/bench/timing.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/signals.hpp"
#include "engine/core/timer.hpp"

namespace engine::bench {
namespace {

namespace fs = std::filesystem;
using io::BenchPoint;
using io::BenchRow;

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// A point's row before it runs: what its parameters say.
BenchRow planned_row(const PlannedPoint& p, int64_t index, const std::vector<std::string>& family) {
  BenchRow row;
  row.point = index;
  row.point_id = p.id;
  row.batch_family = batch_family_id(p.params, family);
  row.model = param_text(p.params, "model");
  row.phase = param_text(p.params, "phase");
  row.device = param_text(p.params, "device");
  row.dtype = param_text(p.params, "dtype");
  row.batch_size = param_int(p.params, "batch_size");
  row.threads = param_int(p.params, "threads");
  row.world_size = std::max<int64_t>(1, param_int(p.params, "world_size"));
  row.num_batches = param_int(p.params, "num_batches");
  row.label = param_text(p.params, "label");
  return row;
}

// What a data-parallel point has in common with its one-process baseline: every parameter but
// the processes, the batch and the threads.
std::string scaling_key(const Point& params) {
  static const std::set<std::string> ignored = {"world_size", "batch_size", "threads", "enabled",
                                                "label"};
  std::string key;
  for (const auto& [name, value] : params) {
    if (!ignored.count(name)) key += name + "=" + value_text(value) + "\n";
  }
  return key;
}

struct OomRecord {
  std::string family;
  int64_t batch_size;
  std::string where;  // "point 17"
};

// Why a point must not run: a smaller batch of the same point ran out of memory.
std::string oom_skip_reason(const std::vector<OomRecord>& records, const BenchRow& row) {
  const OomRecord* smallest = nullptr;
  for (const auto& r : records) {
    if (r.family == row.batch_family && r.batch_size < row.batch_size &&
        (!smallest || r.batch_size < smallest->batch_size)) {
      smallest = &r;
    }
  }
  if (!smallest) return {};
  return "batch " + std::to_string(smallest->batch_size) + " ran out of memory at " +
         smallest->where;
}

bool keep_stored(core::PointStatus status, Rerun rerun) {
  using core::PointStatus;
  if (rerun == Rerun::kAlways) return false;
  if (rerun == Rerun::kFailed) return status == PointStatus::kOk;
  return status == PointStatus::kOk || status == PointStatus::kFailed ||
         status == PointStatus::kTimeout;
}

// The reason given for a point whose process could not even load the engine.
constexpr const char* kNotLoaded = "the engine could not be loaded: ";

std::string error_line(const std::string& output) {
  size_t at = output.rfind("error: ");
  if (at != std::string::npos) return first_line(output.substr(at + 7));
  // the dynamic loader's message: the engine never started (under --max_memory, too little
  // address space to map libtorch's libraries; a CUDA libtorch maps gigabytes)
  at = output.rfind("error while loading shared libraries");
  if (at != std::string::npos) return kNotLoaded + first_line(output.substr(at));
  return {};
}

// One run of a point in a child process; `stopped` when the sweep was interrupted meanwhile.
BenchPoint run_in_child(const PlannedPoint& p, const BenchRow& planned, int repeat,
                        const RunnerOptions& o, bool& stopped) {
  const auto result_path =
      (fs::path(o.scratch_dir) / ("point-" + p.id + "-" + std::to_string(repeat) + ".h5")).string();
  std::error_code ec;
  fs::remove(result_path, ec);
  ChildOptions child;
  const Launcher launcher = parse_launcher(param_text(p.params, "launcher"));
  child.variables = launcher.variables;
  child.argv = launcher.prefix;
  child.argv.insert(child.argv.end(), o.child_command.begin(), o.child_command.end());
  for (auto& flag : point_flags(p.params)) child.argv.push_back(flag);
  for (const auto& flag : o.child_flags) child.argv.push_back(flag);
  child.argv.push_back("--result");
  child.argv.push_back(result_path);
  child.timeout_seconds = o.timeout_seconds;
  child.max_memory_bytes = o.max_memory_bytes;
  child.stop = o.interrupted;
  const ChildResult ended = run_child(child);
  stopped = ended.stopped;

  BenchPoint point;
  point.row = planned;
  bool have_result = false;
  if (!ended.timed_out && fs::exists(result_path, ec)) {
    try {
      point = io::BenchFile::read_point(result_path, 0);
      have_result = true;
    } catch (const core::Error&) {
      have_result = false;  // a file the child did not finish: as if it wrote none
    }
    fs::remove(result_path, ec);
  }
  point.details["child_seconds"] = ended.seconds;
  if (have_result && point.row.status == core::PointStatus::kOk) return point;
  if (have_result) {  // the child's own account of its failure, on the planned row
    BenchPoint failed;
    failed.row = planned;
    failed.row.status = point.row.status;
    failed.row.reason = point.row.reason;
    failed.row.error_kind = point.row.error_kind;
    failed.details = point.details;
    failed.details["output_tail"] = ended.output;
    return failed;
  }
  point.row = planned;
  point.row.status = core::PointStatus::kFailed;
  point.details["output_tail"] = ended.output;
  if (ended.timed_out) {
    point.row.status = core::PointStatus::kTimeout;
    point.row.error_kind = "timeout";
    point.row.reason = "ran past --timeout " + core::number_string(o.timeout_seconds) +
                       " s; its process group was killed";
  } else if (ended.signal != 0) {
    point.row.error_kind = "crash";
    point.row.reason =
        "the point's process was killed by " + core::signal_description(ended.signal);
    if (ended.signal == SIGKILL)
      point.row.reason += " (the kernel's out-of-memory killer sends it)";
  } else {
    const auto line = error_line(ended.output);
    point.row.error_kind = failure_kind(line);
    point.row.reason = line.empty() ? "the point's process exited with code " +
                                          std::to_string(ended.exit_code) + " and no result"
                                    : line;
    if (line.rfind(kNotLoaded, 0) == 0 && o.max_memory_bytes > 0) {
      point.row.reason += " (--max_memory leaves too little address space for libtorch)";
    }
  }
  return point;
}

// Runs the repeats of a point and merges them (bench/repeats.hpp), after those of `stored`
// when the file already holds some: --repeat R adds only the missing ones.
BenchPoint run_point_repeats(const PlannedPoint& p, const BenchRow& planned, const RunnerOptions& o,
                             const BenchPoint* stored, bool& stopped) {
  Repeats repeats(o.unstable_spread);
  if (stored) repeats.add_stored(*stored);
  for (int r = repeats.count(); r < std::max(1, o.repeat); ++r) {
    BenchPoint one;
    if (o.isolation == Isolation::kNone) {
      one = o.run_in_process(p.params);
      one.row.point = planned.point;
      one.row.point_id = planned.point_id;
      one.row.batch_family = planned.batch_family;
      one.row.label = planned.label;
    } else {
      one = run_in_child(p, planned, r, o, stopped);
      if (stopped) return one;
    }
    if (one.row.status != core::PointStatus::kOk) {
      one.row.repeats = r + 1;
      return one;
    }
    repeats.add(one);
  }
  return repeats.merged();
}

}  // namespace

void record_summary(io::BenchRow& row, const Summary& s) {
  row.num_batches = s.batches;
  row.mean_ms = s.mean_ms;
  row.std_ms = s.std_ms;
  row.p50_ms = s.p50_ms;
  row.p90_ms = s.p90_ms;
  row.p99_ms = s.p99_ms;
  // a data-parallel point's ranks step together: the world takes world_size batches a step
  const auto ranks = static_cast<double>(std::max<int64_t>(1, row.world_size));
  row.throughput = s.throughput * ranks;
  row.throughput_p50 = s.throughput_p50 * ranks;
  row.throughput_per_rank = row.world_size > 1 ? s.throughput : io::BenchRow::kNone;
}

void record_pipelined(io::BenchRow& row, double pipelined_ms) {
  row.pipelined_ms = pipelined_ms;
  const auto ranks = static_cast<double>(std::max<int64_t>(1, row.world_size));
  row.throughput_pipelined =
      pipelined_ms > 0 ? static_cast<double>(row.batch_size) * 1000.0 / pipelined_ms * ranks
                       : io::BenchRow::kNone;
}

void record_cpu_share(io::BenchRow& row, double cpu_seconds, double wall_seconds) {
  if (row.device != "cpu" || wall_seconds <= 0 || row.threads <= 0) return;
  row.cpu_share = cpu_seconds / (wall_seconds * static_cast<double>(row.threads));
  row.starved = row.cpu_share < io::BenchRow::kStarvedShare;
}

void record_parts(io::BenchRow& row, const std::map<std::string, std::vector<double>>& part_ms) {
  auto mean = [&](const char* part) {
    const auto it = part_ms.find(part);
    if (it == part_ms.end() || it->second.empty()) return io::BenchRow::kNone;
    return summarize(it->second, 1).mean_ms;
  };
  row.data_ms = mean("data");
  row.forward_ms = mean("forward");
  row.backward_ms = mean("backward");
  row.optimizer_ms = mean("optimizer");
}

Rerun parse_rerun(const std::string& name) {
  if (name == "never") return Rerun::kNever;
  if (name == "failed") return Rerun::kFailed;
  if (name == "always") return Rerun::kAlways;
  throw core::UsageError("--rerun must be never, failed or always, got '" + name + "'");
}

Isolation parse_isolation(const std::string& name) {
  if (name == "process") return Isolation::kProcess;
  if (name == "none") return Isolation::kNone;
  throw core::UsageError("--isolate must be process or none, got '" + name + "'");
}

void check_isolation(const std::vector<PlannedPoint>& plan, Isolation isolation) {
  for (const auto& p : plan) {
    if (p.active) parse_launcher(param_text(p.params, "launcher"));  // a quote that closes
  }
  if (isolation != Isolation::kNone) return;
  for (const auto& p : plan) {
    const int64_t world = param_int(p.params, "world_size");
    if (p.active && world > 1) {
      throw core::UsageError("world_size " + std::to_string(world) +
                             " starts processes of its own: run the sweep with --isolate process");
    }
    if (p.active && !param_text(p.params, "launcher").empty()) {
      throw core::UsageError("the launcher '" + param_text(p.params, "launcher") +
                             "' starts the point's process: run the sweep with --isolate process");
    }
  }
}

std::string failure_kind(const std::string& message) {
  std::string lower = message;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool oom = contains(lower, "out of memory") || contains(lower, "not enough memory") ||
                   contains(lower, "bad_alloc") || contains(lower, "cannot allocate memory") ||
                   contains(lower, "can't allocate memory");
  return oom ? "oom" : "error";
}

std::string first_line(const std::string& message) {
  const auto end = message.find('\n');
  return end == std::string::npos ? message : message.substr(0, end);
}

namespace {

// One sweep over a plan into a benchmark file: the points stored there, the out-of-memory
// failures that stand, and what the sweep has done so far.
class SweepRun {
 public:
  SweepRun(const std::vector<PlannedPoint>& plan, io::BenchFile& file, const RunnerOptions& o)
      : plan_(plan), file_(file), o_(o) {
    read_stored();
    names_ = varying_parameters(plan);
    for (const auto& name : names_) {
      static const std::set<std::string> columns = {"model", "phase",   "batch_size",
                                                    "dtype", "threads", "world_size"};
      if (!columns.count(name)) others_.push_back(name);
    }
    for (const auto& p : plan) to_run_ += p.active && (!kept(p) || short_of_repeats(p)) ? 1 : 0;
  }

  int64_t to_run() const { return to_run_; }

  SweepOutcome run() {
    report_gone();
    for (size_t i = 0; i < plan_.size() && !outcome_.interrupted; ++i) run_planned(i);
    update_scaling_efficiency();
    return outcome_;
  }

 private:
  void read_stored() {
    std::map<std::string, size_t> position;  // a planned point's number in the progress, [k/N]
    for (size_t i = 0; i < plan_.size(); ++i) {
      planned_ids_.insert(plan_[i].id);
      position.emplace(plan_[i].id, i + 1);
    }
    for (auto& point : file_.points()) {
      // an out-of-memory failure skips larger batches while it stands: not when it runs again
      const auto planned = position.find(point.row.point_id);
      const bool stands = planned == position.end() || keep_stored(point.row.status, o_.rerun);
      if (point.row.error_kind == "oom" && stands) {
        // the family as this sweep declares it, whatever the file's run declared; points are
        // numbered as the progress lines number them, one no longer planned by where the file
        // keeps it
        const Point params(point.parameters.begin(), point.parameters.end());
        ooms_.push_back({batch_family_id(params, o_.oom_family), point.row.batch_size,
                         planned != position.end()
                             ? "point " + std::to_string(planned->second) + " (kept from the file)"
                             : "/points/" + std::to_string(point.row.point) +
                                   " of the file (no longer planned)"});
      }
      stored_.emplace(point.row.point_id, std::move(point));
    }
    next_index_ = file_.point_count();
  }

  const BenchPoint* stored(const PlannedPoint& p) const {
    const auto it = stored_.find(p.id);
    return it == stored_.end() ? nullptr : &it->second;
  }
  bool kept(const PlannedPoint& p) const {
    const auto* point = stored(p);
    return point && keep_stored(point->row.status, o_.rerun);
  }
  // The repeats a stored point holds (a row from before repeats were counted holds one)
  static int64_t repeats_of(const BenchPoint& point) {
    return std::max<int64_t>(1, point.row.repeats);
  }
  // A kept point measured fewer times than --repeat asks: the missing repeats run
  bool short_of_repeats(const PlannedPoint& p) const {
    const auto* point = stored(p);
    return kept(p) && point->row.status == core::PointStatus::kOk && repeats_of(*point) < o_.repeat;
  }

  void report_gone() const {
    std::vector<std::string> gone;
    for (const auto& [id, point] : stored_) {
      if (planned_ids_.count(id)) continue;
      Point params(point.parameters.begin(), point.parameters.end());
      gone.push_back("  /points/" + std::to_string(point.row.point) + " (" +
                     core::name_of(point.row.status) + "): " + point_text(params));
    }
    if (gone.empty()) return;
    std::fprintf(o_.out, "%zu stored point%s no longer in the plan (kept in the file):\n",
                 gone.size(), gone.size() == 1 ? " is" : "s are");
    for (const auto& line : gone) std::fprintf(o_.out, "%s\n", line.c_str());
  }

  // A point recorded without running: inactive or skipped, and why.
  void record_unrun(const PlannedPoint& p, const BenchRow& planned, core::PointStatus status,
                    const std::string& reason, const std::string& head) {
    BenchPoint point;
    point.row = planned;
    point.row.status = status;
    point.row.reason = reason;
    point.parameters.insert(p.params.begin(), p.params.end());
    file_.write_point(point);
    outcome_.rows.push_back(point.row);
    std::fprintf(o_.out, "%s: %s (%s)\n", head.c_str(), core::name_of(status), reason.c_str());
  }

  void run_planned(size_t i) {
    const auto& p = plan_[i];
    outcome_.settings.push_back(point_description(p, others_));
    const auto* found = stored(p);
    const int64_t index = found ? found->row.point : next_index_++;
    const BenchRow planned = planned_row(p, index, o_.oom_family);
    const std::string head = "[" + std::to_string(i + 1) + "/" + std::to_string(plan_.size()) +
                             "] " + point_description(p, names_);
    if (!p.active)
      return record_unrun(p, planned, core::PointStatus::kInactive, p.inactive_reason, head);
    if (kept(p) && !short_of_repeats(p)) {
      outcome_.rows.push_back(found->row);
      ++outcome_.kept;
      std::fprintf(o_.out, "%s: kept from the file (%s)\n", head.c_str(),
                   point_result_line(found->row).c_str());
      return;
    }
    if (o_.oom_skip) {
      const auto reason = oom_skip_reason(ooms_, planned);
      if (!reason.empty())
        return record_unrun(p, planned, core::PointStatus::kSkipped, reason, head);
    }
    if (o_.interrupted && o_.interrupted()) {
      outcome_.interrupted = true;
      return;
    }
    run_point(i, planned, head);
  }

  void run_point(size_t i, const BenchRow& planned, const std::string& head) {
    const auto& p = plan_[i];
    std::string eta;
    if (finished_runs_ > 0) {
      const double left = run_seconds_ / static_cast<double>(finished_runs_) *
                          static_cast<double>(to_run_ - finished_runs_);
      eta = " (ETA " + core::duration_string(left) + ")";
    }
    std::fprintf(o_.out, "%s%s ...\n", head.c_str(), eta.c_str());
    std::fflush(o_.out);

    const auto state = machine_state();
    core::Timer timer;
    bool stopped = false;
    std::optional<BenchPoint> base;
    if (short_of_repeats(p)) {
      base = file_.point_with_batches(planned.point);
      const int64_t have = repeats_of(*base);
      std::fprintf(o_.out, "  %lld repeat%s in the file; adding %lld\n",
                   static_cast<long long>(have), have == 1 ? "" : "s",
                   static_cast<long long>(o_.repeat - have));
    }
    BenchPoint point = run_point_repeats(p, planned, o_, base ? &*base : nullptr, stopped);
    if (stopped) {
      outcome_.interrupted = true;
      std::fprintf(o_.out, "  interrupted: this point is not recorded\n");
      return;
    }
    run_seconds_ += timer.seconds();
    ++finished_runs_;
    point.row.point = planned.point;
    point.row.point_id = p.id;
    point.row.batch_family = planned.batch_family;
    point.row.label = planned.label;
    point.parameters.clear();
    point.parameters.insert(p.params.begin(), p.params.end());
    for (const auto& [name, value] : state) point.details.emplace(name, value);
    file_.write_point(point);
    ++outcome_.ran;
    outcome_.rows.push_back(point.row);
    if (point.row.error_kind == "oom") {
      ooms_.push_back(
          {point.row.batch_family, point.row.batch_size, "point " + std::to_string(i + 1)});
    }
    std::fprintf(o_.out, "  %s\n", point_result_line(point.row).c_str());
    std::fflush(o_.out);
    if (o_.after_point) o_.after_point(i, point);
  }

  void update_scaling_efficiency() {
    const auto before = outcome_.rows;
    add_scaling_efficiency(outcome_.rows, plan_);
    for (size_t i = 0; i < outcome_.rows.size(); ++i) {
      const auto& row = outcome_.rows[i];
      const auto& old = before[i].scaling_efficiency;
      const bool same =
          std::isnan(old) ? std::isnan(row.scaling_efficiency) : old == row.scaling_efficiency;
      if (!same) file_.update_row(row);
    }
  }

  const std::vector<PlannedPoint>& plan_;
  io::BenchFile& file_;
  const RunnerOptions& o_;
  std::set<std::string> planned_ids_;
  std::map<std::string, BenchPoint> stored_;
  std::vector<OomRecord> ooms_;
  int64_t next_index_ = 0;
  std::vector<std::string> names_, others_;
  int64_t to_run_ = 0;
  double run_seconds_ = 0;
  int64_t finished_runs_ = 0;
  SweepOutcome outcome_;
};

}  // namespace

int64_t points_to_run(const std::vector<PlannedPoint>& plan, io::BenchFile& file,
                      const RunnerOptions& o) {
  return SweepRun(plan, file, o).to_run();
}

SweepOutcome run_sweep(const std::vector<PlannedPoint>& plan, io::BenchFile& file,
                       const RunnerOptions& o) {
  return SweepRun(plan, file, o).run();
}

void add_scaling_efficiency(std::vector<BenchRow>& rows, const std::vector<PlannedPoint>& plan) {
  const size_t n = std::min(rows.size(), plan.size());
  auto baseline = [&](size_t i) -> const BenchRow* {
    const auto& r = rows[i];
    const auto key = scaling_key(plan[i].params);
    const BenchRow* found = nullptr;
    // weak scaling (the same batch per rank) first, then strong (the same global batch)
    for (const int64_t batch : {r.batch_size, r.batch_size * r.world_size}) {
      for (size_t j = 0; j < n; ++j) {
        const auto& b = rows[j];
        if (b.status != core::PointStatus::kOk || b.world_size != 1 || b.batch_size != batch ||
            !(b.throughput > 0) || scaling_key(plan[j].params) != key) {
          continue;
        }
        if (b.threads == r.threads) return &b;
        if (!found) found = &b;
      }
      if (found) return found;
    }
    return found;
  };
  for (size_t i = 0; i < n; ++i) {
    auto& r = rows[i];
    if (r.status != core::PointStatus::kOk || r.world_size <= 1) continue;
    const BenchRow* b = baseline(i);
    r.scaling_efficiency =
        b ? r.throughput / (static_cast<double>(r.world_size) * b->throughput) : BenchRow::kNone;
  }
}

}  // namespace engine::bench
