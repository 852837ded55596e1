// Console output of a training run: a live progress line on a terminal (plain periodic lines
// otherwise), one summary line per epoch, and a final table of last and best metrics.
#pragma once

#include "engine/core/timer.hpp"
#include "engine/train/observer.hpp"
#include "engine/train/trainer.hpp"

namespace engine::cli {

class ConsoleObserver : public train::Observer {
 public:
  explicit ConsoleObserver(bool quiet);
  void on_progress(const train::Progress& p) override;
  void on_epoch_end(const train::EpochSummary& s) override;
  // Ends an open progress line (before an error message).
  void finish_line();
  // "finished N steps in T: <why>", then last train, last and best validation metrics.
  void print_result(const train::TrainResult& result);

 private:
  void clear_line();
  bool quiet_;
  bool tty_;
  bool line_open_ = false;
  core::Timer since_print_;
};

}  // namespace engine::cli
