#include "engine/search/search_runner.hpp"
#include "engine/core/statuses.hpp"

#include <optional>

#include <signal.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <thread>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/format.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/io/result_file.hpp"
#include "engine/search/trial_process.hpp"

namespace engine::search {
namespace {

// A trial that the file system refused may not even have written its log ("exited without a
// word"): the system's own words when the folder's file system has no room left.
std::string with_full_disk(const std::string& reason, const std::string& folder) {
  struct statvfs room {};
  if (statvfs(folder.c_str(), &room) != 0 || room.f_bavail > 0) return reason;
  return reason + "; " + std::strerror(ENOSPC) + " on the file system of " + folder;
}

namespace fs = std::filesystem;

using Clock = std::chrono::steady_clock;

// How long a trial asked to stop (Ctrl-C, SIGTERM at its timeout) may take to save its
// checkpoint before it is killed: a trial stuck inside one step never reaches the point where
// it stops, and the search must end all the same.
constexpr double kStopGrace = 60;

struct Running {
  Job job;
  std::unique_ptr<core::ChildProcess> process;
  std::string log;
  Clock::time_point started = Clock::now();
  std::optional<Clock::time_point> stop_asked;  // when it was signalled to stop
  double grace = kStopGrace;                    // then killed once this much longer has passed
  bool timed_out = false;
  bool killed = false;
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string trial_folder(const TrialCommand& command, int64_t id) {
  return (fs::path(command.folder) / std::to_string(id)).string();
}

// The run file a trial's engine train wrote under its folder (<folder>/<id>/<name>/<time>.h5).
std::string find_run_file(const std::string& folder) {
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    const auto& p = it->path();
    if (it->is_regular_file() && p.extension() == ".h5" &&
        p.filename().string().rfind("ckpt-", 0) != 0) {
      return p.string();
    }
  }
  return {};
}

std::string describe(const std::map<std::string, io::HParam>& hparams, const SearchSpace& space) {
  std::vector<std::string> parts;
  for (const auto& [name, _] : space.spaces) {
    const auto it = hparams.find(name);
    if (it == hparams.end()) continue;
    const auto* number = std::get_if<double>(&it->second);
    parts.push_back(name + "=" + (number ? core::number_string(*number) : hparam_text(it->second)));
  }
  return core::join(parts, " ");
}

std::vector<std::string> trial_argv(const Trial& trial, const Job& job, const TrialCommand& command,
                                    const SearcherConfig& config, const SearchSpace& space) {
  std::vector<std::string> argv = {command.engine, "train", command.script};
  if (!trial.run_file.empty()) {
    argv.insert(argv.end(), {"--resume", trial.run_file});
  } else {
    argv.insert(argv.end(), {"--out", trial_folder(command, trial.id), "--seed",
                             std::to_string(command.seed + static_cast<uint64_t>(trial.id))});
    for (const auto& o : command.overrides) argv.insert(argv.end(), {"--set", o});
    for (const auto& [name, _] : space.spaces) {
      argv.insert(argv.end(), {"--set", name + "=" + hparam_text(trial.hparams.at(name))});
    }
  }
  if (job.length > 0) {
    argv.insert(argv.end(),
                {config.unit == "steps" ? "--steps" : "--epochs", std::to_string(job.length)});
    // asha: the trial's whole length, as hp.budget, so that a schedule spans all its rungs (a
    // promoted trial's rates are those of one run of that length), and the rung's as hp.rung;
    // the other searchers train each trial to max_length at once: no rung
    if (config.name == "asha" && config.max_length >= job.length) {
      argv.insert(argv.end(), {"--budget", std::to_string(config.max_length)});
    }
  }
  argv.insert(argv.end(), {"--threads", std::to_string(command.threads), "-q"});
  argv.insert(argv.end(), command.flags.begin(), command.flags.end());
  return argv;
}

// The searched metric's last finite value in the run file; NaN when it logged only NaN. A
// UsageError when the run file has no such series at all.
double searched_metric(const io::RunFile& run, const std::string& metric) {
  const auto dot = metric.find('.');
  const std::string split = metric.substr(0, dot), name = metric.substr(dot + 1);
  const auto s = run.metrics.find(split);
  if (s == run.metrics.end() || !s->second.series.count(name)) {
    std::vector<std::string> known;
    for (const auto& [split_name, series] : run.metrics) {
      for (const auto& [series_name, _] : series.series)
        known.push_back(split_name + "." + series_name);
    }
    throw core::UsageError("searcher metric '" + metric + "' is not in the trial's run file " +
                           run.path + " (it has " + core::join(known, ", ") + ")");
  }
  const auto& values = s->second.series.at(name);
  for (auto it = values.rbegin(); it != values.rend(); ++it) {
    if (std::isfinite(*it)) return *it;
  }
  return NAN;
}

// A trial goes on from its run file's latest checkpoint; one killed before its first
// checkpoint (or before its run file) starts again in an emptied folder.
void prepare_folder(Trial& trial, const std::string& folder) {
  if (trial.run_file.empty() || !fs::exists(trial.run_file)) trial.run_file = find_run_file(folder);
  if (!trial.run_file.empty()) {
    try {
      if (!io::read_run_file(trial.run_file).latest_checkpoint.empty()) return;
    } catch (const core::Error&) {
      // unreadable: start again
    }
  }
  trial.run_file.clear();
  core::remove_tree(folder);
  fs::create_directories(folder);
}

void record(io::SearchFile& file, const Searcher& searcher, const Trial& trial) {
  file.write_trial(record_of(trial));
  if (const auto best = searcher.best()) {
    for (const auto& t : searcher.trials()) {
      if (t.id != *best) continue;
      file.write_best({t.id, searcher.config().metric, search::metric_of(t), t.hparams});
    }
  }
}

}  // namespace

io::SearchTrialRecord record_of(const Trial& trial) {
  io::SearchTrialRecord r = trial;
  if (!trial.run_file.empty() && fs::exists(trial.run_file)) {
    try {
      r.metrics = io::read_run_file(trial.run_file).metrics;
    } catch (const core::Error&) {
      // a run file its crash left unreadable: the search file keeps the rest
    }
  }
  return r;
}

namespace {

// One search's loop: starts the searcher's jobs as trials (up to max_concurrent_trials), stops
// them on Ctrl-C or past --trial_timeout, and settles each finished one.
class SearchRun {
 public:
  SearchRun(Searcher& searcher, const TrialCommand& command, io::SearchFile& file,
            const ProgressSink& progress)
      : searcher_(searcher),
        config_(searcher.config()),
        space_(searcher.space()),
        command_(command),
        file_(file),
        progress_(progress) {}

  SearchOutcome run() {
    for (;;) {
      start_jobs();
      if (running_.empty()) break;
      stop_on_interrupt();
      stop_late_trials();
      if (!settle_ended()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!outcome_.interrupted) {
      searcher_.close();
      for (const auto& t : searcher_.trials()) record(file_, searcher_, t);
    }
    return outcome_;
  }

 private:
  void start(const Job& job, Trial& trial, const std::string& log) {
    running_.push_back(
        Running{job, start_trial(trial_argv(trial, job, command_, config_, space_), log), log});
  }

  void start_jobs() {
    while (!outcome_.interrupted &&
           static_cast<int64_t>(running_.size()) < config_.max_concurrent_trials) {
      const auto job = searcher_.next();
      if (!job) break;
      Trial& trial = searcher_.trial(job->trial);
      const std::string folder = trial_folder(command_, trial.id);
      prepare_folder(trial, folder);
      const std::string log = (fs::path(folder) / "train.log").string();
      const std::string unit =
          job->length == 1 ? config_.unit.substr(0, config_.unit.size() - 1) : config_.unit;
      progress_("trial " + std::to_string(trial.id) +
                (job->rung == 0 ? " started: " + describe(trial.hparams, space_)
                                : " promoted to rung " + std::to_string(job->rung)) +
                (job->length > 0 ? " (" + std::to_string(job->length) + " " + unit + ")" : ""));
      record(file_, searcher_, trial);
      start(*job, trial, log);
    }
  }

  void stop_on_interrupt() {
    const int signal = core::pending_interrupt();
    if (!signal || outcome_.interrupted) return;
    outcome_.interrupted = true;
    outcome_.signal = signal;
    progress_("stopping: each running trial saves a checkpoint; engine search --resume continues");
    for (auto& r : running_) {
      r.process->signal(SIGINT);
      r.stop_asked = Clock::now();
    }
  }

  void stop_late_trials() {
    for (auto& r : running_) {
      const double limit = command_.trial_timeout_seconds;
      if (limit > 0 && !r.stop_asked && seconds_since(r.started) > limit) {
        progress_("trial " + std::to_string(r.job.trial) + " ran past --trial_timeout " +
                  core::number_string(limit) + " s: stopping it");
        r.process->signal(SIGTERM);
        r.stop_asked = Clock::now();
        r.grace = std::min(kStopGrace, limit);
        r.timed_out = true;
      } else if (r.stop_asked && !r.killed && seconds_since(*r.stop_asked) > r.grace) {
        r.process->signal(SIGKILL);  // a killed process ends, and poll() reaps it
        r.killed = true;
      }
    }
  }

  // Settles every trial that has ended; false when none had.
  bool settle_ended() {
    bool any = false;
    for (size_t i = 0; i < running_.size();) {
      const auto end = running_[i].process->poll();
      if (!end) {
        ++i;
        continue;
      }
      any = true;
      Running done = std::move(running_[i]);
      running_.erase(running_.begin() + static_cast<long>(i));
      settle(done, end->code());
    }
    return any;
  }

  void settle(Running& r, int code) {
    Trial& trial = searcher_.trial(r.job.trial);
    if (trial.run_file.empty()) trial.run_file = find_run_file(trial_folder(command_, trial.id));
    if (code == 0) return finished(r, trial);
    if (r.timed_out) {  // not restarted: it would run out of time again
      return failed(r, trial,
                    "timed out after " + core::number_string(command_.trial_timeout_seconds) +
                        " s (--trial_timeout)");
    }
    if (code == 130 || code == 143 || outcome_.interrupted) {
      // stopped by Ctrl-C with the search: --resume continues it from its checkpoint
      trial.status = core::TrialStatus::kInterrupted;
      record(file_, searcher_, trial);
      return;
    }
    const std::string reason = failure_reason(r.log);
    if (code == core::kExitIo) {
      // the file system refused the trial (full, a quota): every trial after it would fail
      // the same way, and the search's own file is on it too, so the search stops here
      const std::string why = with_full_disk(reason, trial_folder(command_, trial.id));
      failed(r, trial, why);
      throw core::IoError("trial " + std::to_string(trial.id) + " could not write its files (" +
                          why +
                          "); the search stops: make room, then go on with engine search "
                          "--resume");
    }
    if (trial.restarts >= config_.max_restarts) return failed(r, trial, reason);
    ++trial.restarts;
    progress_("trial " + std::to_string(trial.id) + " failed (" + reason + "); restart " +
              std::to_string(trial.restarts) + " of " + std::to_string(config_.max_restarts));
    trial.reason = reason;
    record(file_, searcher_, trial);
    prepare_folder(trial, trial_folder(command_, trial.id));
    start(r.job, trial, r.log);
  }

  void finished(const Running& r, const Trial& trial) {
    const double metric = searched_metric(io::read_run_file(trial.run_file), config_.metric);
    searcher_.finished(r.job, metric);
    // in the search file before it is said: a search killed right after the line resumes
    // without running this rung again
    record(file_, searcher_, trial);
    const auto best = searcher_.best();
    progress_("trial " + std::to_string(trial.id) + " finished rung " + std::to_string(r.job.rung) +
              ": " + config_.metric + " " + core::number_string(metric) + " (" +
              std::to_string(searcher_.trials().size()) + " of " +
              std::to_string(searcher_.planned_trials()) + " trials started, " +
              std::to_string(searcher_.running()) + " training" +
              (best ? "; best: trial " + std::to_string(*best) + ", " +
                          core::number_string(search::metric_of(searcher_.trial(*best)))
                    : "") +
              ")");
  }

  void failed(const Running& r, const Trial& trial, const std::string& reason) {
    searcher_.failed(r.job, reason);
    record(file_, searcher_, trial);
    progress_("trial " + std::to_string(trial.id) + " failed: " + reason);
  }

  Searcher& searcher_;
  const SearcherConfig& config_;
  const SearchSpace& space_;
  const TrialCommand& command_;
  io::SearchFile& file_;
  const ProgressSink& progress_;
  std::vector<Running> running_;
  SearchOutcome outcome_;
};

}  // namespace

SearchOutcome run_search(Searcher& searcher, const TrialCommand& command, io::SearchFile& file,
                         const ProgressSink& progress) {
  return SearchRun(searcher, command, file, progress).run();
}

}  // namespace engine::search
