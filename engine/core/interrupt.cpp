#include "engine/core/interrupt.hpp"

#include <unistd.h>

#include <csignal>

namespace engine::core {
namespace {

volatile std::sig_atomic_t received = 0;

void on_signal(int signal) {
  if (received != 0) {  // second signal: the user insists, stop now
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  received = signal;
  static const char kMessage[] =
      "\nstopping after this step and saving a checkpoint (press Ctrl-C again to quit now)\n";
  // write(2) is async-signal-safe; printf is not
  [[maybe_unused]] const auto n = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
}

}  // namespace

void install_interrupt_handlers() {
  received = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a read interrupted by the signal goes on
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);  // the terminal or ssh session closed: as SIGTERM
}

int pending_interrupt() {
  return received;
}

void reset_interrupt_handlers() {
  received = 0;
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGHUP, SIG_DFL);
}

}  // namespace engine::core
