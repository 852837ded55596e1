// The searchers of `engine search` (Determined's semantics): which trials run, with which
// hyperparameters and for how long. A searcher only decides; the search loop (runner.hpp)
// trains the trials and reports each job's metric back. Its whole state is its trials, so a
// search file that records them restores it (restore()).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/hparam.hpp"
#include "engine/io/search_file.hpp"
#include "engine/search/space.hpp"

namespace engine::search {

struct SearcherConfig {
  std::string name = "single";  // single | grid | random | asha | tpe
  // How random and asha draw a new trial's hyperparameters: random (independent draws) or tpe
  // (the Tree-structured Parzen Estimator, learning from the finished trials: tpe.hpp). The
  // name tpe is random search with the tpe sampler.
  std::string sampler = "random";
  std::string metric = "validation.loss";
  bool smaller_is_better = true;
  int64_t max_trials = 0;       // random and asha: how many trials to start
  int64_t max_rungs = 5;        // asha: rungs of successive halving
  double divisor = 4;           // asha: 1/divisor of a rung goes on to the next
  int64_t max_length = 0;       // a whole trial's training length (0: the script's own)
  std::string unit = "epochs";  // what max_length counts: epochs | steps
  int64_t max_concurrent_trials = 1;
  int64_t max_restarts = 0;  // a failed trial starts again from its last checkpoint
  uint64_t seed = 0;
};

// One trial: a set of hyperparameters trained in rungs (one rung unless the searcher is asha),
// as the search file records it (io/search_file.hpp): status running | paused | completed |
// stopped | failed, the rung it trains toward or last finished, the metric at the end of each
// finished rung, restarts, its run file and why it failed or stopped.
using Trial = io::SearchTrialRecord;

// The trial's last finished rung's metric (NaN when none).
double metric_of(const Trial& trial);

// Train `trial` until `length` (in the config's unit; 0: the script's own length), continuing
// its run file when it has one.
struct Job {
  int64_t trial = 0;
  int64_t rung = 0;
  int64_t length = 0;
};

class Searcher {
 public:
  // A UsageError names a bad setting (an unknown name, asha without max_length, ...).
  Searcher(SearcherConfig config, SearchSpace space);

  // The next job to start, or nullopt when none can start before a running one finishes (or
  // the search is over: then running() is 0 too).
  std::optional<Job> next();
  // The job's trial reached its length with `metric` (NaN: the trial logged none).
  void finished(const Job& job, double metric);
  // The job's trial failed for good (restarts spent): it takes no further part.
  void failed(const Job& job, const std::string& reason);
  // Ends the search: asha's trials still paused at a rung are stopped early.
  void close();

  // The trials started so far, in order of their start (a shard's ids skip the others').
  const std::vector<Trial>& trials() const { return trials_; }
  Trial& trial(int64_t id);  // std::out_of_range for an id never started
  int64_t running() const;
  // The finished trial with the best metric (nullopt: none yet).
  std::optional<int64_t> best() const;
  // The training length of asha's rung k (all rungs: max_length for the other searchers).
  int64_t rung_length(int64_t rung) const;
  const SearcherConfig& config() const { return config_; }
  const SearchSpace& space() const { return space_; }
  // How many trials the searcher starts in all (grid: the grid's size).
  int64_t planned_trials() const { return planned_; }

  // Continues from trials a search file recorded: a running trial's job is handed out again
  // first (from its run file), the rest as if the search had never stopped.
  void restore(std::vector<Trial> trials);
  // Trials whose id % shards == shard only (grid and random): one shard of a job array.
  void set_shard(int64_t shard, int64_t shards);

  // Is `a` better than `b` for the searched metric (NaN is worst)?
  bool better(double a, double b) const;

 private:
  std::optional<Job> new_trial();
  std::optional<Job> promotion();
  std::map<std::string, io::HParam> hparams_of(int64_t id) const;

  SearcherConfig config_;
  SearchSpace space_;
  std::vector<std::map<std::string, io::HParam>> grid_;
  std::vector<Trial> trials_;
  std::vector<Job> resumed_;  // jobs of trials that were running when the search stopped
  int64_t planned_ = 0;
  int64_t next_id_ = 0;  // the next trial id to start (shards skip ids)
  int64_t shard_ = 0, shards_ = 1;
};

}  // namespace engine::search
