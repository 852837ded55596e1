// engine search SCRIPT.lua: a hyperparameter search over the script's search spaces with its
// `searcher` (Determined's semantics), each trial an `engine train` child process; one search
// file (docs/search.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/child_process.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/format.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/core/statuses.hpp"
#include "engine/core/threads.hpp"
#include "engine/io/result_file.hpp"
#include "engine/io/search_file.hpp"
#include "engine/report/reports.hpp"
#include "engine/search/search_runner.hpp"
#include "engine/search/search_setup.hpp"

namespace engine::cli {
namespace {

namespace fs = std::filesystem;

uint64_t fresh_seed() {
  return static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) %
         1000000007ULL;
}

cxxopts::Options search_options() {
  cxxopts::Options options("engine search",
                           "Search the hyperparameters of a training script whose hparams hold "
                           "search spaces (require 'search'), under its `searcher`; every trial "
                           "is an engine train run, results go to one search file.");
  options.positional_help("SCRIPT").show_positional_help();
  options.add_options()("script", "training script (.lua)", cxxopts::value<std::string>())(
      "resume", "continue a stopped or killed search from its search file",
      cxxopts::value<std::string>())("shard",
                                     "run only the trials of shard INDEX/COUNT (grid and random)",
                                     cxxopts::value<std::string>())(
      "shards",
      "a job array's size: the shard's index comes from SLURM_ARRAY_TASK_ID or "
      "JOB_COMPLETION_INDEX",
      cxxopts::value<int64_t>())(
      "trial_timeout",
      "seconds a trial's training may run (each rung's); past it the trial is stopped (its "
      "checkpoint saved) and counts as failed (default: no limit)",
      cxxopts::value<double>());
  add_run_flags(options);
  options.parse_positional({"script"});
  return options;
}

// The search the command line asks for: a new one, or the one a search file holds (--resume).
struct SearchRequest {
  std::optional<search::StoredSearch> previous;
  std::string script;
  std::vector<std::string> overrides;
  double trial_timeout = 0;
};

SearchRequest search_request(const cxxopts::ParseResult& flags) {
  SearchRequest r;
  if (flags.count("resume")) {
    r.previous = search::stored_search(io::read_search_file(flags["resume"].as<std::string>()));
    r.script = r.previous->script;
    r.overrides = r.previous->overrides;
    if (flags.count("script") && fs::absolute(flags["script"].as<std::string>()) != r.script) {
      throw core::UsageError("--resume " + r.previous->path + " searches " + r.script + ", not " +
                             flags["script"].as<std::string>());
    }
  } else {
    if (!flags.count("script")) {
      throw core::UsageError(
          "engine search needs a script: engine search SCRIPT.lua (or --resume SEARCH.h5)");
    }
    r.script = flags["script"].as<std::string>();
    if (flags.count("set")) r.overrides = flags["set"].as<std::vector<std::string>>();
  }
  check_script(r.script);
  r.trial_timeout = flags.count("trial_timeout") ? flags["trial_timeout"].as<double>() : 0;
  if (flags.count("trial_timeout") && !(r.trial_timeout > 0)) {
    throw core::UsageError("--trial_timeout must be a number of seconds > 0, got " +
                           core::number_string(r.trial_timeout));
  }
  return r;
}

search::Shard choose_shard(const cxxopts::ParseResult& flags, const SearchRequest& request) {
  if (request.previous) return request.previous->shard;
  if (flags.count("shard")) return search::parse_shard(flags["shard"].as<std::string>());
  const auto shards =
      flags.count("shards") ? std::optional<int64_t>(flags["shards"].as<int64_t>()) : std::nullopt;
  if (const auto from = search::shard_from_environment(shards, std::getenv)) {
    std::printf("shard %lld of %lld (from %s)\n", static_cast<long long>(from->index),
                static_cast<long long>(from->count), from->from.c_str());
    return *from;
  }
  return {};
}

// The search file: the one being resumed, or a new one that records the whole search.
std::unique_ptr<io::SearchFile> open_search_file(
    const cxxopts::ParseResult& flags, const SearchRequest& request,
    const search::SearcherConfig& config, const search::SearchSpace& space,
    const search::Shard& shard, const std::string& name, const std::string& command) {
  if (request.previous) return std::make_unique<io::SearchFile>(request.previous->path, command);
  io::SearchInfo info;
  info.name = name;
  info.command = command;
  info.script_path = fs::absolute(request.script).string();
  const auto text = core::read_file(request.script);
  info.script_text.assign(text.begin(), text.end());
  info.searcher = search::searcher_attributes(config);
  for (const auto& [key, s] : space.spaces) info.spaces[key] = s.describe();
  info.overrides = request.overrides;
  info.seed = config.seed;
  info.shard = shard.index;
  info.shards = shard.count;
  const auto path =
      io::SearchFile::new_path(flags["out"].as<std::string>(), name, shard.index, shard.count);
  return std::make_unique<io::SearchFile>(path, info);
}

// The best trial's checkpoint by name (RUN.h5:best where its trainer keeps the best, else
// RUN.h5:latest), to evaluate or train on from; nothing when no trial finished.
void print_best_checkpoint(const search::Searcher& searcher, const std::string& script) {
  const auto best = searcher.best();
  if (!best) return;
  for (const auto& trial : searcher.trials()) {
    if (trial.id != *best || trial.run_file.empty()) continue;
    std::string which = "latest";
    try {
      if (!io::read_run_file(trial.run_file).best_checkpoint.empty()) which = "best";
    } catch (const core::Error&) {
      return;  // its run file cannot be read now: the leaderboard above names it
    }
    const std::string name = trial.run_file + ":" + which;
    std::printf(
        "best trial: %lld, its %s checkpoint: %s\nevaluate it: engine eval %s --checkpoint %s\n",
        static_cast<long long>(trial.id), which.c_str(), name.c_str(), script.c_str(),
        name.c_str());
  }
}

// Runs the trials; the file says how the search ended, and the command ends as it did.
int run_search_and_report(search::Searcher& searcher, const search::TrialCommand& trial,
                          io::SearchFile& file) {
  search::SearchOutcome outcome;
  {
    core::InterruptScope interrupts(nullptr);  // the runner says what it does
    try {
      outcome = search::run_search(searcher, trial, file, [](const std::string& line) {
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      });
    } catch (const std::exception& e) {
      file.finish(core::FileStatus::kFailed, core::describe_exception(e));
      throw;
    }
  }
  file.finish(outcome.interrupted ? core::FileStatus::kInterrupted : core::FileStatus::kCompleted);
  const std::string path = file.path();
  report::ReportRequest request;
  request.inputs = {path};
  const std::string table = report::render(report::make_report(request), report::Format::kText);
  std::printf("\n%s", table.c_str());
  print_best_checkpoint(searcher, trial.script);
  std::printf("search file: %s\nshow it: engine report %s\n", path.c_str(), path.c_str());
  const auto& trials = searcher.trials();
  const bool all_failed =
      !trials.empty() && std::all_of(trials.begin(), trials.end(), [](const auto& t) {
        return t.status == core::TrialStatus::kFailed;
      });
  if (all_failed && !outcome.interrupted) {
    throw core::TrainingError("every trial of the search failed (" + std::to_string(trials.size()) +
                              "); trial " + std::to_string(trials.front().id) + ": " +
                              trials.front().reason);
  }
  if (outcome.interrupted) {
    throw core::Interrupted(
        "the search was interrupted; continue it with: engine search --resume " + path,
        outcome.signal);
  }
  return 0;
}

// The searcher's metric is one the trials will log, checked before any trial trains: a
// misspelt name would otherwise surface only after the first trials.
void check_searched_metric(const std::string& metric, const lua::TrainScript& script) {
  const auto dot = metric.find('.');
  const std::string split = metric.substr(0, dot), name = metric.substr(dot + 1);
  if (split != "train" && split != "validation") {
    throw core::UsageError("searcher.metric '" + metric + "': the split must be train or " +
                           "validation (the splits a trial logs metrics in)");
  }
  const auto logged = script.logged_metrics();
  if (!logged) return;  // a hook may log metrics of its own
  if (std::find(logged->begin(), logged->end(), name) != logged->end()) return;
  std::vector<std::string> known;
  for (const auto& n : *logged) known.push_back(split + "." + n);
  throw core::UsageError("searcher.metric '" + metric + "' is not a metric " + script.path() +
                         " logs (it logs " + core::join(known, ", ") + "); no trial was started");
}

}  // namespace

int search_command(const std::vector<std::string>& args) {
  auto options = search_options();
  const auto flags = parse(options, args);
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  const SearchRequest request = search_request(flags);
  const int threads = apply_common_flags(flags);
  std::string command = "engine search";
  for (const auto& a : args) command += " " + a;

  auto session = make_session(request.script);
  auto script = session->train_script(request.script);
  script->apply_overrides(request.overrides);
  const auto config_or = script->searcher();
  if (!config_or) {
    throw core::UsageError(request.script +
                           " has no `searcher` table: engine search needs one, e.g. searcher = "
                           "{name = 'random', metric = 'validation.loss', max_trials = 8}");
  }
  search::SearcherConfig config = *config_or;
  check_searched_metric(config.metric, *script);
  if (request.previous) {
    config.seed = request.previous->seed;
  } else {
    config.seed =
        flags.count("seed") ? flags["seed"].as<uint64_t>() : script->seed().value_or(fresh_seed());
  }
  const auto space = script->search_space();
  search::Searcher searcher(config, space);
  const search::Shard shard = choose_shard(flags, request);
  searcher.set_shard(shard.index, shard.count);
  if (request.previous) searcher.restore(request.previous->trials);
  const auto file = open_search_file(flags, request, config, space, shard, script->name(), command);

  search::TrialCommand trial;
  trial.engine = core::executable_path();
  trial.script = fs::absolute(request.script).string();
  trial.overrides = request.overrides;
  trial.flags = {"--device", flags["device"].as<std::string>(), "--allocator",
                 flags["allocator"].as<std::string>()};
  trial.threads = std::max<int>(1, threads / static_cast<int>(config.max_concurrent_trials));
  trial.folder = io::SearchFile::trials_folder(file->path());
  trial.seed = config.seed;
  trial.trial_timeout_seconds = request.trial_timeout;

  std::printf(
      "search %s: %s over %zu hyperparameter%s, %lld trial%s planned, %lld at once "
      "(%d thread%s each); %s %s\n",
      script->name().c_str(), config.name.c_str(), space.spaces.size(),
      space.spaces.size() == 1 ? "" : "s", static_cast<long long>(searcher.planned_trials()),
      searcher.planned_trials() == 1 ? "" : "s",
      static_cast<long long>(config.max_concurrent_trials), trial.threads,
      trial.threads == 1 ? "" : "s", request.previous ? "continuing" : "writing",
      file->path().c_str());
  std::fflush(stdout);
  return run_search_and_report(searcher, trial, *file);
}

}  // namespace engine::cli
