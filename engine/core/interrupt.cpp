#include "engine/core/interrupt.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>

namespace engine::core {
namespace {

constexpr int kHandled[] = {SIGINT, SIGTERM, SIGHUP};  // SIGHUP: the terminal or ssh closed

volatile std::sig_atomic_t received = 0;
volatile std::sig_atomic_t received_count = 0;
const char* volatile first_message = nullptr;
volatile std::sig_atomic_t count_each = 0;

void on_signal(int signal) {
  if (received != 0 && !count_each) {  // a second signal: the user insists, stop now
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  if (received == 0) received = signal;
  received_count = received_count + 1;
  if (received_count == 1 && first_message != nullptr) {
    // write(2) is async-signal-safe; printf is not
    [[maybe_unused]] const auto n = write(STDERR_FILENO, first_message, std::strlen(first_message));
  }
}

}  // namespace

struct InterruptScope::Saved {
  struct sigaction handlers[3];
  std::sig_atomic_t received, received_count, count_each;
  const char* message;
};

InterruptScope::InterruptScope(const char* message, SecondInterrupt second)
    : saved_(std::make_unique<Saved>()) {
  saved_->received = received;
  saved_->received_count = received_count;
  saved_->count_each = count_each;
  saved_->message = first_message;
  received = 0;
  received_count = 0;
  first_message = message;
  count_each = second == SecondInterrupt::kCountEach;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a read interrupted by the signal goes on
  for (size_t i = 0; i < 3; ++i) sigaction(kHandled[i], &action, &saved_->handlers[i]);
}

InterruptScope::~InterruptScope() {
  for (size_t i = 0; i < 3; ++i) sigaction(kHandled[i], &saved_->handlers[i], nullptr);
  received = saved_->received;
  received_count = saved_->received_count;
  count_each = saved_->count_each;
  first_message = saved_->message;
}

int pending_interrupt() {
  return received;
}

int interrupt_count() {
  return received_count;
}

}  // namespace engine::core
