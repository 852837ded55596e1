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
#include "engine/core/threads.hpp"
#include "engine/io/search_file.hpp"
#include "engine/report/reports.hpp"
#include "engine/search/search_runner.hpp"

namespace engine::cli {
namespace {

namespace fs = std::filesystem;

std::map<std::string, io::h5::Attribute> searcher_attributes(const search::SearcherConfig& c) {
  return {{"name", c.name},
          {"metric", c.metric},
          {"smaller_is_better", c.smaller_is_better},
          {"max_trials", c.max_trials},
          {"max_rungs", c.max_rungs},
          {"divisor", c.divisor},
          {"max_length", c.max_length},
          {"unit", c.unit},
          {"max_concurrent_trials", c.max_concurrent_trials},
          {"max_restarts", c.max_restarts}};
}

// "i/n"
std::pair<int64_t, int64_t> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      size_t a = 0, b = 0;
      const int64_t i = std::stoll(text.substr(0, slash), &a);
      const int64_t n = std::stoll(text.substr(slash + 1), &b);
      if (a == slash && b == text.size() - slash - 1) return {i, n};
    }
  } catch (const std::exception&) {
  }
  throw core::UsageError("--shard " + text + ": expected INDEX/COUNT, e.g. --shard 0/4");
}

std::optional<int64_t> integer_variable(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 0) {
    throw core::UsageError(std::string("the environment variable ") + name + "='" + text +
                           "' is not a whole number >= 0");
  }
  return value;
}

// A job array's task as a shard: Slurm's array (index from SLURM_ARRAY_TASK_MIN, count
// SLURM_ARRAY_TASK_COUNT), or a Kubernetes indexed Job (JOB_COMPLETION_INDEX, with the count
// from --shards, the Job's completions).
std::optional<std::pair<std::pair<int64_t, int64_t>, std::string>> shard_from_environment(
    const cxxopts::ParseResult& flags) {
  const std::optional<int64_t> given =
      flags.count("shards") ? std::optional<int64_t>(flags["shards"].as<int64_t>()) : std::nullopt;
  if (const auto task = integer_variable("SLURM_ARRAY_TASK_ID")) {
    const auto count = given ? given : integer_variable("SLURM_ARRAY_TASK_COUNT");
    if (count && *count > 1) {
      const int64_t first = integer_variable("SLURM_ARRAY_TASK_MIN").value_or(0);
      return std::make_pair(std::make_pair(*task - first, *count),
                            std::string("SLURM_ARRAY_TASK_ID"));
    }
  }
  if (const auto index = integer_variable("JOB_COMPLETION_INDEX")) {
    if (!given) {
      throw core::UsageError(
          "JOB_COMPLETION_INDEX is set (a Kubernetes indexed Job): give the Job's completions "
          "with --shards N, or the shard with --shard INDEX/COUNT");
    }
    if (*given > 1)
      return std::make_pair(std::make_pair(*index, *given), std::string("JOB_COMPLETION_INDEX"));
  }
  if (given) {
    throw core::UsageError("--shards " + std::to_string(*given) +
                           " needs a job array's index (SLURM_ARRAY_TASK_ID or "
                           "JOB_COMPLETION_INDEX); else give --shard INDEX/COUNT");
  }
  return std::nullopt;
}

uint64_t fresh_seed() {
  return static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) %
         1000000007ULL;
}

// The text attribute of a search file ("" when absent).
std::string text_of(const io::SearchContents& contents, const std::string& name) {
  const auto it = contents.attributes.find(name);
  if (it == contents.attributes.end()) return "";
  const auto* text = std::get_if<std::string>(&it->second);
  return text ? *text : "";
}

int64_t int_of(const io::SearchContents& contents, const std::string& name, int64_t fallback) {
  const auto it = contents.attributes.find(name);
  if (it == contents.attributes.end()) return fallback;
  const auto* value = std::get_if<int64_t>(&it->second);
  return value ? *value : fallback;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

}  // namespace

int search_command(const std::vector<std::string>& args) {
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
  const auto flags = parse(options, args);
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  const bool resuming = flags.count("resume") > 0;
  std::optional<io::SearchContents> previous;
  std::string script_path;
  std::vector<std::string> overrides;
  if (resuming) {
    previous = io::read_search_file(flags["resume"].as<std::string>());
    script_path = text_of(*previous, "script");
    overrides = lines_of(text_of(*previous, "overrides"));
    if (flags.count("script") && fs::absolute(flags["script"].as<std::string>()) != script_path) {
      throw core::UsageError("--resume " + previous->path + " searches " + script_path + ", not " +
                             flags["script"].as<std::string>());
    }
  } else {
    if (!flags.count("script")) {
      throw core::UsageError(
          "engine search needs a script: engine search SCRIPT.lua (or --resume SEARCH.h5)");
    }
    script_path = flags["script"].as<std::string>();
    if (flags.count("set")) overrides = flags["set"].as<std::vector<std::string>>();
  }
  check_script(script_path);
  const int threads = apply_common_flags(flags);
  const double trial_timeout =
      flags.count("trial_timeout") ? flags["trial_timeout"].as<double>() : 0;
  if (flags.count("trial_timeout") && !(trial_timeout > 0)) {
    throw core::UsageError("--trial_timeout must be a number of seconds > 0, got " +
                           core::number_string(trial_timeout));
  }
  std::string command = "engine search";
  for (const auto& a : args) command += " " + a;

  auto session = make_session(script_path);
  auto script = session->train_script(script_path);
  script->apply_overrides(overrides);
  const auto config_or = script->searcher();
  if (!config_or) {
    throw core::UsageError(script_path +
                           " has no `searcher` table: engine search needs one, e.g. searcher = "
                           "{name = 'random', metric = 'validation.loss', max_trials = 8}");
  }
  search::SearcherConfig config = *config_or;
  if (previous) {
    config.seed = static_cast<uint64_t>(int_of(*previous, "seed", 0));
  } else {
    config.seed =
        flags.count("seed") ? flags["seed"].as<uint64_t>() : script->seed().value_or(fresh_seed());
  }
  const auto space = script->search_space();
  search::Searcher searcher(config, space);
  int64_t shard = 0, shards = 1;
  if (previous) {
    shard = int_of(*previous, "shard", 0);
    shards = int_of(*previous, "shards", 1);
  } else if (flags.count("shard")) {
    std::tie(shard, shards) = parse_shard(flags["shard"].as<std::string>());
  } else if (const auto from = shard_from_environment(flags)) {
    std::tie(shard, shards) = from->first;
    std::printf("shard %lld of %lld (from %s)\n", static_cast<long long>(shard),
                static_cast<long long>(shards), from->second.c_str());
  }
  searcher.set_shard(shard, shards);

  std::unique_ptr<io::SearchFile> file;
  std::string path;
  io::SearchInfo info;
  info.name = script->name();
  if (previous) {
    path = previous->path;
    searcher.restore(previous->trials);
    file = std::make_unique<io::SearchFile>(path, command);
  } else {
    info.command = command;
    info.script_path = fs::absolute(script_path).string();
    const auto text = core::read_file(script_path);
    info.script_text.assign(text.begin(), text.end());
    info.searcher = searcher_attributes(config);
    for (const auto& [name, s] : space.spaces) info.spaces[name] = s.describe();
    info.overrides = overrides;
    info.seed = config.seed;
    info.shard = shard;
    info.shards = shards;
    path = io::SearchFile::new_path(flags["out"].as<std::string>(), info.name, shard, shards);
    file = std::make_unique<io::SearchFile>(path, info);
  }

  search::TrialCommand trial;
  trial.engine = core::executable_path();
  trial.script = fs::absolute(script_path).string();
  trial.overrides = overrides;
  trial.flags = {"--device", flags["device"].as<std::string>(), "--allocator",
                 flags["allocator"].as<std::string>()};
  trial.threads = std::max<int>(1, threads / static_cast<int>(config.max_concurrent_trials));
  trial.folder = io::SearchFile::trials_folder(path);
  trial.seed = config.seed;
  trial.trial_timeout_seconds = trial_timeout;

  std::printf(
      "search %s: %s over %zu hyperparameter%s, %lld trial%s planned, %lld at once "
      "(%d thread%s each); %s %s\n",
      info.name.c_str(), config.name.c_str(), space.spaces.size(),
      space.spaces.size() == 1 ? "" : "s", static_cast<long long>(searcher.planned_trials()),
      searcher.planned_trials() == 1 ? "" : "s",
      static_cast<long long>(config.max_concurrent_trials), trial.threads,
      trial.threads == 1 ? "" : "s", previous ? "continuing" : "writing", path.c_str());
  std::fflush(stdout);
  search::SearchOutcome outcome;
  {
    core::InterruptScope interrupts(nullptr);  // the runner says what it does
    try {
      outcome = search::run_search(searcher, trial, *file, [](const std::string& line) {
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      });
    } catch (const std::exception& e) {
      file->finish("failed", core::describe_exception(e));
      throw;
    }
  }
  file->finish(outcome.interrupted ? "interrupted" : "completed");

  report::ReportRequest request;
  request.inputs = {path};
  const std::string table = report::render(report::make_report(request), report::Format::kText);
  std::printf("\n%s", table.c_str());
  std::printf("search file: %s\nshow it: engine report %s\n", path.c_str(), path.c_str());
  const auto& trials = searcher.trials();
  const bool all_failed =
      !trials.empty() &&
      std::all_of(trials.begin(), trials.end(), [](const auto& t) { return t.status == "failed"; });
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

}  // namespace engine::cli
