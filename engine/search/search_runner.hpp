// The search loop of `engine search`: hands the searcher's jobs to `engine train` child
// processes (up to max_concurrent_trials at once, each with its share of the threads), reads
// each finished job's metric from the trial's run file, restarts a failed trial from its last
// checkpoint up to max_restarts times, and records every trial in the search file as it goes.
// Ctrl-C stops the trials (they checkpoint) and leaves a search that --resume continues.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/io/search_file.hpp"
#include "engine/search/searcher.hpp"

namespace engine::search {

struct TrialCommand {
  std::string engine;                  // the engine binary that trains the trials
  std::string script;                  // the training script
  std::vector<std::string> overrides;  // the search command's --set, for every trial
  std::vector<std::string> flags;      // passed on to every trial (--device, --allocator, ...)
  int threads = 1;                     // each trial's libtorch threads
  std::string folder;                  // trial <id> writes under <folder>/<id>/
  uint64_t seed = 0;                   // trial <id> trains with seed + id
  // --trial_timeout: a trial process (one rung's training) running longer gets SIGTERM (it
  // saves a checkpoint and stops), then SIGKILL once as long again has passed (at most
  // kStopGrace); the trial fails "timed out". 0: no limit.
  double trial_timeout_seconds = 0;
};

// What the search prints as it goes ("trial 3 finished rung 0: validation.loss 0.41 ...").
using ProgressSink = std::function<void(const std::string&)>;

struct SearchOutcome {
  bool interrupted = false;
  int signal = 0;
};

// Runs the searcher's jobs to the end (or to Ctrl-C). A UsageError when the searched metric is
// not in a trial's run file (it lists the metrics that are).
SearchOutcome run_search(Searcher& searcher, const TrialCommand& command, io::SearchFile& file,
                         const ProgressSink& progress);

// The searcher's trial as the search file records it, with the metric series of its run file.
io::SearchTrialRecord record_of(const Trial& trial);

}  // namespace engine::search
