// Console output of a training run: a live progress line on a terminal (plain periodic lines
// otherwise) and one summary line per epoch.
#pragma once

#include "engine/core/timer.hpp"
#include "engine/train/observer.hpp"

namespace engine::cli {

class ConsoleObserver : public train::Observer {
 public:
  explicit ConsoleObserver(bool quiet);
  void on_progress(const train::Progress& p) override;
  void on_epoch_end(const train::EpochSummary& s) override;

 private:
  void clear_line();
  bool quiet_;
  bool tty_;
  bool line_open_ = false;
  core::Timer since_print_;
};

}  // namespace engine::cli
