// Ctrl-C, SIGTERM and SIGHUP while a command works. Inside an InterruptScope the first one asks
// the work to stop at its next safe point (a training step, a benchmark point, a trial); what
// the scope says then is printed at once. A second one ends the process, or with
// kCountEach (the --nproc launcher, which passes each one on to its workers) is counted too.
#pragma once

#include <memory>

namespace engine::core {

enum class SecondInterrupt { kEndsProcess, kCountEach };

// Scopes nest: an inner one's handlers and message hold until it ends, then the outer one's
// are back as they were (with what it had received).
class InterruptScope {
 public:
  // `message` is printed on the first signal (a string literal: the handler keeps the pointer);
  // nullptr prints nothing.
  explicit InterruptScope(const char* message,
                          SecondInterrupt second = SecondInterrupt::kEndsProcess);
  // Restores the handlers there were before and forgets a received signal.
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;  // the handlers and state before this scope
};

// What the first signal says in a training run.
inline constexpr const char* kTrainingInterruptMessage =
    "\nstopping after this step and saving a checkpoint (press Ctrl-C again to quit now)\n";

// The first signal received inside the scope, 0 when none (or outside any scope).
int pending_interrupt();
// How many signals the scope received.
int interrupt_count();

}  // namespace engine::core
