#include "engine/core/damaged_file_guard.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "engine/core/signals.hpp"

namespace engine::core {
namespace {

constexpr int kDepth = 8;
constexpr size_t kPathBytes = 1024;
// Plain memory a signal handler may read: the paths of the reads in progress, innermost last.
char reading[kDepth][kPathBytes];
std::atomic<int> depth{0};
bool handlers_installed = false;  // the read's alarm only where its handler is

constexpr int kDamagedExitCode = kExitData;  // as a damaged file found by a check
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void say(const char* text) {
  const size_t length = std::strlen(text);
  if (::write(STDERR_FILENO, text, length) < 0) {
    // nothing else can be said from here
  }
}

void on_read_timeout(int) {
  const int now = depth.load();
  if (now <= 0 || now > kDepth) return;  // the read ended as the alarm went off
  say("error: ");
  say(reading[now - 1]);
  say(": the file is damaged: reading it did not end (the library that reads it went round in "
      "circles in the file's structure); the file cannot be used\n");
  ::_exit(kDamagedExitCode);
}

void on_fatal_signal(int signal) {
  const int now = depth.load();
  if (now <= 0 || now > kDepth) {  // not inside a read: the signal does what it would have
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  say("error: ");
  say(reading[now - 1]);
  say(": the file is damaged: reading it crashed the library that reads it (");
  const char* name = signal_name(signal);
  say(name ? name : "a fatal signal");
  say("); the file cannot be used\n");
  ::_exit(kDamagedExitCode);
}

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(undefined_behavior_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

}  // namespace

unsigned read_limit_seconds() {
  static const unsigned limit = [] {
    const char* text = std::getenv("ENGINE_READ_TIMEOUT");
    const long value = text ? std::strtol(text, nullptr, 10) : 0;
    return value > 0 && value < 100000 ? static_cast<unsigned>(value) : 600u;
  }();
  return limit;
}

void install_damaged_file_handlers() {
  if (sanitized()) return;
  static char alternate_stack[1 << 16];
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof(alternate_stack);
  ::sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  action.sa_flags = SA_ONSTACK | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  for (const int signal : kSignals) ::sigaction(signal, &action, nullptr);
  struct sigaction timeout {};
  timeout.sa_handler = on_read_timeout;
  sigemptyset(&timeout.sa_mask);
  ::sigaction(SIGALRM, &timeout, nullptr);
  handlers_installed = true;
}

ReadingFile::ReadingFile(const std::string& path) {
  const int at = depth.load();
  if (at >= 0 && at < kDepth) {
    const size_t n = std::min(path.size(), kPathBytes - 1);
    std::memcpy(reading[at], path.data(), n);
    reading[at][n] = '\0';
  }
  depth.store(at + 1);
  if (at == 0 && handlers_installed) ::alarm(read_limit_seconds());
}

ReadingFile::~ReadingFile() {
  const int now = depth.load() - 1;
  depth.store(now);
  if (now == 0 && handlers_installed) ::alarm(0);
}

}  // namespace engine::core
