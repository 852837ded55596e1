// The training loop: epochs of forward, loss, backward and optimizer step; logging every N
// steps; validation every epoch or every N steps; learning-rate schedule.
#pragma once

#include <vector>

#include "engine/core/timer.hpp"

#include "engine/train/metrics.hpp"
#include "engine/train/observer.hpp"
#include "engine/train/spec.hpp"

namespace engine::train {

struct TrainResult {
  int64_t steps = 0;
  int64_t epochs = 0;
  double seconds = 0;
  std::map<std::string, double> last_validation;
};

class Trainer {
 public:
  Trainer(TrainSpec& spec, std::vector<Observer*> observers);
  TrainResult run();
  // Runs the whole validation split once; averages per sample.
  std::map<std::string, double> validate();

 private:
  void emit(const MetricRow& row);
  void log_train_window(int64_t step, double epoch);
  void run_validation(int64_t step, double epoch);

  TrainSpec& spec_;
  std::vector<Observer*> observers_;
  MetricAccumulator window_;
  std::map<std::string, double> last_validation_;
  core::Timer clock_;  // since run() started: the time column of metric rows
};

}  // namespace engine::train
