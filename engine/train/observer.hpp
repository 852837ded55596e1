// How the trainer reports: metric rows (for the run file) and progress (for the console).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace engine::train {

struct MetricRow {
  std::string split;  // "train", "validation" or "data"
  int64_t step = 0;   // global optimizer step when the row was taken
  double epoch = 0;   // fractional epoch
  double time = 0;    // seconds since the run started
  std::map<std::string, double> values;
};

struct Progress {
  int64_t epoch = 0;  // 1-based, as shown to users
  int64_t epochs = 0;
  int64_t batch = 0;  // batches done in this epoch
  int64_t batches = 0;
  int64_t step = 0;
  int64_t total_steps = 0;
  // The average loss over the current logging window, read when called: an observer that does
  // not show it every step spares a CUDA run the wait for the device.
  std::function<double()> loss;
  double samples_per_second = 0;
  double eta_seconds = 0;
  double lr = 0;
};

struct EpochSummary {
  int64_t epoch = 0;  // 1-based
  double seconds = 0;
  double samples_per_second = 0;
  double loader_wait_fraction = 0;  // time the step waited for data / epoch time
  int64_t skipped_records = 0;      // bad records the training data left out (skip_bad)
  int64_t nan_skipped = 0;          // batches left out for a NaN or infinite loss (on_nan = 'skip')
  int64_t overflow_skipped = 0;     // steps the loss scaler skipped for non-finite gradients
  double lr = 0;
  std::map<std::string, double> train;
  std::map<std::string, double> validation;
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_metrics(const MetricRow&) {}
  virtual void on_progress(const Progress&) {}
  virtual void on_epoch_end(const EpochSummary&) {}
  // A checkpoint is about to be written: what the observer holds back (a run file's waiting
  // rows) goes out first, so that the file has every row the checkpoint counts.
  virtual void before_checkpoint(int64_t /*step*/) {}
  // A checkpoint was written (renamed into place) / deleted by the keep policy.
  virtual void on_checkpoint(const std::string& /*path*/, int64_t /*step*/) {}
  // After on_checkpoint, when that checkpoint is the best so far (keep_best)
  virtual void on_best_checkpoint(const std::string& /*path*/) {}
  virtual void on_checkpoint_removed(const std::string& /*path*/) {}
};

}  // namespace engine::train
