#include "engine/bench/sweep_runner.hpp"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "engine/bench/machine.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/bench/point_process.hpp"
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
BenchRow planned_row(const PlannedPoint& p, int64_t index) {
  BenchRow row;
  row.point = index;
  row.point_id = p.id;
  row.batch_family = batch_family_id(p.params);
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

// The parameters that differ between points of the plan (model first), for progress lines.
std::vector<std::string> varying(const std::vector<PlannedPoint>& plan) {
  std::vector<std::string> names;
  if (plan.empty()) return names;
  for (const auto& [name, value] : plan.front().params) {
    const bool varies = std::any_of(
        plan.begin(), plan.end(), [&, &key = name, &first = value](const PlannedPoint& p) {
          const auto it = p.params.find(key);
          return it == p.params.end() || !values_equal(it->second, first);
        });
    if ((varies && name != "enabled") || name == "model") names.push_back(name);
  }
  std::stable_partition(names.begin(), names.end(), [](const auto& n) { return n == "model"; });
  return names;
}

std::string describe(const PlannedPoint& p, const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) {
    const auto value = param_text(p.params, name);
    if (value.empty()) continue;
    if (!text.empty()) text += " ";
    text += name == "model" ? value : name + "=" + value;
  }
  return text;
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

bool keep_stored(const std::string& status, Rerun rerun) {
  if (rerun == Rerun::kAlways) return false;
  if (rerun == Rerun::kFailed) return status == "ok";
  return status == "ok" || status == "failed" || status == "timeout";
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
  child.argv = o.child_command;
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
  if (have_result && point.row.status == "ok") return point;
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
  point.row.status = "failed";
  point.details["output_tail"] = ended.output;
  if (ended.timed_out) {
    point.row.status = "timeout";
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

// Runs the repeats of a point and merges them: every batch, the summary of all of them, the
// spread of the repeats' medians.
BenchPoint run_point_repeats(const PlannedPoint& p, const BenchRow& planned, const RunnerOptions& o,
                             bool& stopped) {
  std::vector<double> p50s, all_ms;
  std::vector<int64_t> repeat_of;
  BenchPoint merged;
  const int repeats = std::max(1, o.repeat);
  for (int r = 0; r < repeats; ++r) {
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
    if (r == 0) merged = one;
    if (one.row.status != "ok") {
      one.row.repeats = r + 1;
      return one;
    }
    p50s.push_back(one.row.p50_ms);
    all_ms.insert(all_ms.end(), one.batch_ms.begin(), one.batch_ms.end());
    repeat_of.insert(repeat_of.end(), one.batch_ms.size(), r);
    if (r > 0) {
      for (const auto& [part, ms] : one.part_ms) {
        auto& into = merged.part_ms[part];
        into.insert(into.end(), ms.begin(), ms.end());
      }
    }
    merged.row.peak_resident_bytes =
        std::max(merged.row.peak_resident_bytes, one.row.peak_resident_bytes);
    merged.row.peak_device_bytes =
        std::max(merged.row.peak_device_bytes, one.row.peak_device_bytes);
  }
  merged.batch_ms = all_ms;
  merged.batch_repeat = repeat_of;
  auto& row = merged.row;
  record_summary(row, summarize(all_ms, row.batch_size));
  record_parts(row, merged.part_ms);
  row.repeats = repeats;
  if (repeats > 1) {
    std::vector<double> sorted = p50s;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    row.p50_spread = median > 0 ? (sorted.back() - sorted.front()) / median : 0;
    row.unstable = row.p50_spread > o.unstable_spread;
    std::string list;
    for (double v : p50s) list += (list.empty() ? "" : ", ") + core::number_string(v);
    merged.details["repeat_p50_ms"] = list;
  }
  return merged;
}

std::string result_line(const BenchRow& row) {
  if (row.status == "ok") {
    char text[256];
    std::snprintf(text, sizeof text,
                  "ok: p50 %.3f ms, mean %.3f ms, p90 %.3f ms, %.1f samples/s, peak %.0f MiB",
                  row.p50_ms, row.mean_ms, row.p90_ms, row.throughput,
                  static_cast<double>(row.peak_resident_bytes) / (1 << 20));
    std::string line = text;
    if (row.peak_device_bytes > 0) {
      line +=
          ", device peak " +
          core::number_string(std::round(static_cast<double>(row.peak_device_bytes) / (1 << 20))) +
          " MiB";
    }
    const std::string parts = parts_text(row);
    if (!parts.empty()) line += "; " + parts;
    if (row.repeats > 1) {
      line += ", " + std::to_string(row.repeats) + " repeats spread " +
              core::number_string(std::round(row.p50_spread * 1000) / 10) + "%";
      if (row.unstable) line += " UNSTABLE";
    }
    return line;
  }
  return row.status + ": " + row.reason;
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

std::string parts_text(const BenchRow& row) {
  std::string text;
  const std::pair<const char*, double> parts[] = {{"data", row.data_ms},
                                                  {"forward", row.forward_ms},
                                                  {"backward", row.backward_ms},
                                                  {"optimizer", row.optimizer_ms}};
  for (const auto& [name, ms] : parts) {
    if (std::isnan(ms)) continue;
    char one[64];
    std::snprintf(one, sizeof one, "%s%s %.3f", text.empty() ? "" : " + ", name, ms);
    text += one;
  }
  return text.empty() ? text : text + " ms (means)";
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

SweepOutcome run_sweep(const std::vector<PlannedPoint>& plan, io::BenchFile& file,
                       const RunnerOptions& o) {
  SweepOutcome outcome;
  std::map<std::string, BenchPoint> stored;
  std::vector<OomRecord> ooms;
  std::set<std::string> planned_ids;
  for (const auto& p : plan) planned_ids.insert(p.id);
  for (auto& point : file.points()) {
    // an out-of-memory failure skips larger batches while it stands: not when it runs again
    const bool stands =
        !planned_ids.count(point.row.point_id) || keep_stored(point.row.status, o.rerun);
    if (point.row.error_kind == "oom" && stands) {
      ooms.push_back({point.row.batch_family, point.row.batch_size,
                      "stored point " + std::to_string(point.row.point)});
    }
    stored.emplace(point.row.point_id, std::move(point));
  }
  int64_t next_index = file.point_count();

  std::vector<std::string> gone;
  for (const auto& [id, point] : stored) {
    if (planned_ids.count(id)) continue;
    Point params(point.parameters.begin(), point.parameters.end());
    gone.push_back("  /points/" + std::to_string(point.row.point) + " (" + point.row.status +
                   "): " + point_text(params));
  }
  if (!gone.empty()) {
    std::fprintf(o.out, "%zu stored point%s no longer in the plan (kept in the file):\n",
                 gone.size(), gone.size() == 1 ? " is" : "s are");
    for (const auto& line : gone) std::fprintf(o.out, "%s\n", line.c_str());
  }

  const auto names = varying(plan);
  std::vector<std::string> others;
  for (const auto& name : names) {
    static const std::set<std::string> columns = {"model", "phase",   "batch_size",
                                                  "dtype", "threads", "world_size"};
    if (!columns.count(name)) others.push_back(name);
  }
  const int64_t total = static_cast<int64_t>(plan.size());
  int64_t to_run = 0;
  for (const auto& p : plan) {
    const auto it = stored.find(p.id);
    if (p.active && (it == stored.end() || !keep_stored(it->second.row.status, o.rerun))) ++to_run;
  }
  double run_seconds = 0;
  int64_t finished_runs = 0;

  for (int64_t i = 0; i < total; ++i) {
    const auto& p = plan[static_cast<size_t>(i)];
    outcome.settings.push_back(describe(p, others));
    const auto found = stored.find(p.id);
    const int64_t index = found != stored.end() ? found->second.row.point : next_index++;
    BenchRow planned = planned_row(p, index);
    const std::string head =
        "[" + std::to_string(i + 1) + "/" + std::to_string(total) + "] " + describe(p, names);

    if (!p.active) {
      BenchPoint point;
      point.row = planned;
      point.row.status = "inactive";
      point.row.reason = p.inactive_reason;
      point.parameters.insert(p.params.begin(), p.params.end());
      file.write_point(point);
      outcome.rows.push_back(point.row);
      std::fprintf(o.out, "%s: inactive (%s)\n", head.c_str(), p.inactive_reason.c_str());
      continue;
    }
    if (found != stored.end() && keep_stored(found->second.row.status, o.rerun)) {
      outcome.rows.push_back(found->second.row);
      ++outcome.kept;
      std::fprintf(o.out, "%s: kept from the file (%s)\n", head.c_str(),
                   result_line(found->second.row).c_str());
      continue;
    }
    if (o.oom_skip) {
      const auto reason = oom_skip_reason(ooms, planned);
      if (!reason.empty()) {
        BenchPoint point;
        point.row = planned;
        point.row.status = "skipped";
        point.row.reason = reason;
        point.parameters.insert(p.params.begin(), p.params.end());
        file.write_point(point);
        outcome.rows.push_back(point.row);
        std::fprintf(o.out, "%s: skipped (%s)\n", head.c_str(), reason.c_str());
        continue;
      }
    }
    if (o.interrupted && o.interrupted()) {
      outcome.interrupted = true;
      break;
    }

    std::string eta;
    if (finished_runs > 0) {
      const double left = run_seconds / static_cast<double>(finished_runs) *
                          static_cast<double>(to_run - finished_runs);
      eta = " (ETA " + core::duration_string(left) + ")";
    }
    std::fprintf(o.out, "%s%s ...\n", head.c_str(), eta.c_str());
    std::fflush(o.out);

    const auto state = machine_state();
    core::Timer timer;
    bool stopped = false;
    BenchPoint point = run_point_repeats(p, planned, o, stopped);
    if (stopped) {
      outcome.interrupted = true;
      std::fprintf(o.out, "  interrupted: this point is not recorded\n");
      break;
    }
    run_seconds += timer.seconds();
    ++finished_runs;
    point.row.point = index;
    point.row.point_id = p.id;
    point.row.batch_family = planned.batch_family;
    point.row.label = planned.label;
    point.parameters.clear();
    point.parameters.insert(p.params.begin(), p.params.end());
    for (const auto& [name, value] : state) point.details.emplace(name, value);
    file.write_point(point);
    ++outcome.ran;
    outcome.rows.push_back(point.row);
    if (point.row.error_kind == "oom") {
      ooms.push_back(
          {point.row.batch_family, point.row.batch_size, "point " + std::to_string(i + 1)});
    }
    std::fprintf(o.out, "  %s\n", result_line(point.row).c_str());
    std::fflush(o.out);
  }
  const auto before = outcome.rows;
  add_scaling_efficiency(outcome.rows, plan);
  for (size_t i = 0; i < outcome.rows.size(); ++i) {
    const auto& row = outcome.rows[i];
    const auto& old = before[i].scaling_efficiency;
    const bool same =
        std::isnan(old) ? std::isnan(row.scaling_efficiency) : old == row.scaling_efficiency;
    if (!same) file.update_row(row);
  }
  return outcome;
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
        if (b.status != "ok" || b.world_size != 1 || b.batch_size != batch || !(b.throughput > 0) ||
            scaling_key(plan[j].params) != key) {
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
    if (r.status != "ok" || r.world_size <= 1) continue;
    const BenchRow* b = baseline(i);
    r.scaling_efficiency =
        b ? r.throughput / (static_cast<double>(r.world_size) * b->throughput) : BenchRow::kNone;
  }
}

std::string results_table(const std::vector<io::BenchRow>& rows,
                          const std::vector<std::string>& settings) {
  size_t width = 0;
  for (const auto& text : settings) width = std::max(width, text.size());
  if (width > 0) width = std::max<size_t>(width, 8);
  const int w = static_cast<int>(width);
  std::string out;
  char line[1024];
  // data-parallel points: their processes, and the world's samples/s against one process's
  const bool parallel =
      std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.world_size > 1; });
  const std::string procs_head = parallel ? "  procs" : "";
  const std::string efficiency_head = parallel ? " efficiency" : "";
  std::snprintf(line, sizeof line, "%-16s %-14s %6s %-8s %7s%s %s%-*s%10s %10s %12s%s %-8s %s\n",
                "model", "phase", "batch", "dtype", "threads", procs_head.c_str(), width ? " " : "",
                w, width ? "settings" : "", "mean ms", "p90 ms", "samples/s",
                efficiency_head.c_str(), "status", "reason");
  out += line;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const bool ok = r.status == "ok";
    auto number = [ok](double v, const char* format) {
      char text[32];
      if (!ok || std::isnan(v)) return std::string("-");
      std::snprintf(text, sizeof text, format, v);
      return std::string(text);
    };
    std::string status = r.status;
    if (r.unstable) status += "*";
    const std::string setting = i < settings.size() ? settings[i] : "";
    char procs[16] = "", efficiency[24] = "";
    if (parallel) {
      std::snprintf(procs, sizeof procs, " %6lld", static_cast<long long>(r.world_size));
      std::snprintf(efficiency, sizeof efficiency, " %10s",
                    number(100 * r.scaling_efficiency, "%.0f%%").c_str());
    }
    std::snprintf(
        line, sizeof line, "%-16s %-14s %6lld %-8s %7lld%s %s%-*s%10s %10s %12s%s %-8s %s\n",
        r.model.c_str(), r.phase.c_str(), static_cast<long long>(r.batch_size), r.dtype.c_str(),
        static_cast<long long>(r.threads), procs, width ? " " : "", w, setting.c_str(),
        number(r.mean_ms, "%.3f").c_str(), number(r.p90_ms, "%.3f").c_str(),
        number(r.throughput, "%.1f").c_str(), efficiency, status.c_str(), r.reason.c_str());
    out += line;
  }
  if (std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.unstable; })) {
    out += "ok*: the repeats' p50s spread more than the limit (--unstable_spread): unstable\n";
  }
  if (parallel) {
    out +=
        "batch: per process; samples/s: all processes together; efficiency: samples/s over "
        "procs x the one-process point's (same batch per process, else same global batch)\n";
  }
  return out;
}

std::string plan_table(const std::vector<PlannedPoint>& plan) {
  const auto names = varying(plan);
  std::vector<size_t> width;
  for (const auto& name : names) {
    size_t w = name.size();
    for (const auto& p : plan) w = std::max(w, param_text(p.params, name).size());
    width.push_back(w);
  }
  std::string out;
  char cell[512];
  std::snprintf(cell, sizeof cell, "%4s  ", "#");
  out += cell;
  for (size_t n = 0; n < names.size(); ++n) {
    std::snprintf(cell, sizeof cell, "%-*s  ", static_cast<int>(width[n]), names[n].c_str());
    out += cell;
  }
  out += "runs      made by\n";
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto& p = plan[i];
    std::snprintf(cell, sizeof cell, "%4zu  ", i + 1);
    out += cell;
    for (size_t n = 0; n < names.size(); ++n) {
      std::snprintf(cell, sizeof cell, "%-*s  ", static_cast<int>(width[n]),
                    param_text(p.params, names[n]).c_str());
      out += cell;
    }
    out += p.active ? "yes       " : "inactive  ";
    out += p.made_by;
    if (!p.active) out += "; " + p.inactive_reason;
    out += "\n";
  }
  size_t active = 0;
  for (const auto& p : plan) active += p.active ? 1 : 0;
  out += std::to_string(plan.size()) + " points, " + std::to_string(active) + " to run, " +
         std::to_string(plan.size() - active) + " inactive\n";
  return out;
}

std::string plan_text(const std::vector<PlannedPoint>& plan) {
  std::string out;
  for (const auto& p : plan) {
    out += p.id + " " + (p.active ? "active" : "inactive") + " " + point_text(p.params) + "\n";
  }
  return out;
}

}  // namespace engine::bench
