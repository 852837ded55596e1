// The trainer's own counters and running values: what a checkpoint must hold, besides the
// model, optimizer, scheduler and random generators, for a resumed run to go on exactly.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "engine/train/metrics.hpp"

namespace engine::train {

// The best value seen of a watched metric, and validations since it last improved.
struct BestTracker {
  double best = std::numeric_limits<double>::quiet_NaN();
  int64_t best_step = -1;
  int64_t stale = 0;
};

struct TrainerState {
  int64_t epoch = 0;           // epoch in progress, 0-based
  int64_t epoch_position = 0;  // samples of its order consumed (the loader resumes there)
  int64_t epoch_batches = 0;   // batches trained in it
  int64_t epoch_samples = 0;
  int64_t epoch_skipped = 0;  // bad records its loader left out
  int64_t epoch_nan_skipped = 0;
  int64_t epoch_overflow_skipped = 0;  // optimizer steps the loss scaler skipped
  int64_t step = 0;                    // optimizer steps taken
  int64_t samples_seen = 0;
  double elapsed = 0;        // seconds of training up to this point, over every process of the run
  MetricAccumulator window;  // training metrics since the last logged row
  MetricAccumulator epoch_metrics;  // training metrics of the epoch in progress
  std::map<std::string, double> last_validation;
  BestTracker early_stopping, keep_best;
  std::string best_checkpoint;
  std::vector<std::string> checkpoints;  // kept by keep_last, oldest first
  std::map<std::string, int64_t> rows;   // rows written per split of the run file
  double grad_scale = 65536.0;           // the loss scaler's (float16's) current scale
  int64_t grad_scale_tracker = 0;
  int64_t world_size = 1;  // processes training it: epoch_position counts one rank's samples
};

}  // namespace engine::train
