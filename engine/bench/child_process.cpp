#include "engine/bench/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "engine/core/errors.hpp"
#include "engine/core/timer.hpp"

namespace engine::bench {
namespace {

// Between fork and exec only async-signal-safe calls: no allocation, no locks.
// The child dies with the sweep (a killed sweep leaves no point running), and keeps none of
// the sweep's files open: an inherited descriptor would hold the benchmark file's HDF5 lock.
[[noreturn]] void become_child(const std::vector<char*>& argv, int output_fd, int64_t max_memory,
                               pid_t sweep) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != sweep) _exit(1);
  dup2(output_fd, STDOUT_FILENO);
  dup2(output_fd, STDERR_FILENO);
  close_range(STDERR_FILENO + 1, ~0U, 0);
  if (max_memory > 0) {
    rlimit limit{static_cast<rlim_t>(max_memory), static_cast<rlim_t>(max_memory)};
    setrlimit(RLIMIT_AS, &limit);
  }
  execv(argv[0], argv.data());
  static const char message[] = "error: cannot start the benchmark process\n";
  ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  _exit(127);
}

void keep_tail(std::string& output, const char* data, size_t n, size_t limit) {
  output.append(data, n);
  if (output.size() > 2 * limit) output.erase(0, output.size() - limit);
}

}  // namespace

ChildResult run_child(const ChildOptions& options) {
  if (options.argv.empty()) throw core::UsageError("no command to run");
  std::vector<char*> argv;
  for (const auto& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw core::IoError(std::string("cannot make a pipe for a benchmark process: ") +
                        std::strerror(errno));
  }
  const pid_t sweep = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw core::IoError(std::string("cannot start a benchmark process: ") + std::strerror(errno));
  }
  if (pid == 0) become_child(argv, fds[1], options.max_memory_bytes, sweep);
  setpgid(pid, pid);  // as the child does: whichever runs first
  close(fds[1]);

  ChildResult result;
  core::Timer timer;
  bool open = true;
  int status = 0;
  bool reaped = false;
  int kill_stage = 0;  // 0: running, 1: SIGTERM sent, 2: SIGKILL sent
  double kill_time = 0;
  char buffer[4096];
  while (!reaped) {
    if (open) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        const ssize_t n = read(fds[0], buffer, sizeof buffer);
        if (n > 0) {
          keep_tail(result.output, buffer, static_cast<size_t>(n), options.output_tail_bytes);
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          open = false;
        }
      }
    } else {
      usleep(20000);
    }
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      reaped = true;
      break;
    }
    const double now = timer.seconds();
    if (kill_stage == 0) {
      const bool late = options.timeout_seconds > 0 && now > options.timeout_seconds;
      const bool stop = options.stop && options.stop();
      if (late || stop) {
        result.timed_out = late;
        result.stopped = stop && !late;
        kill(-pid, late ? SIGKILL : SIGTERM);
        kill_stage = late ? 2 : 1;
        kill_time = now;
      }
    } else if (kill_stage == 1 && now - kill_time > 5) {
      kill(-pid, SIGKILL);
      kill_stage = 2;
    }
  }
  // whatever the child wrote before it ended
  while (open) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    keep_tail(result.output, buffer, static_cast<size_t>(n), options.output_tail_bytes);
  }
  close(fds[0]);
  if (kill_stage > 0) kill(-pid, SIGKILL);  // anything the child left in its group
  if (result.output.size() > options.output_tail_bytes) {
    result.output.erase(0, result.output.size() - options.output_tail_bytes);
  }
  result.seconds = timer.seconds();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

int64_t parse_memory_size(const std::string& text, const char* flag) {
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  std::string unit(end ? end : "");
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();   // GB, GIB -> G, GI
  if (unit.size() == 2 && unit.back() == 'I') unit.pop_back();  // GI -> G
  double scale = 0;
  if (unit.empty()) scale = 1;
  if (unit == "K") scale = 1024.0;
  if (unit == "M") scale = 1024.0 * 1024;
  if (unit == "G") scale = 1024.0 * 1024 * 1024;
  if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  if (end == text.c_str() || scale == 0 || !(number > 0) || !std::isfinite(number)) {
    throw core::UsageError(std::string(flag) + " takes a size such as 2G, 512M or 1.5G, got '" +
                           text + "'");
  }
  return static_cast<int64_t>(number * scale);
}

double device_memory_fraction(const std::string& text, int64_t device_bytes, const char* flag) {
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  const bool plain = end != text.c_str() && end && *end == '\0';
  if (plain && number > 0 && number <= 1) return number;
  if (plain && number <= 0) {
    throw core::UsageError(std::string(flag) +
                           " takes a fraction of the device's memory in (0, 1] "
                           "or a size such as 20G, got '" +
                           text + "'");
  }
  const int64_t bytes = parse_memory_size(text, flag);
  if (device_bytes > 0 && bytes > device_bytes) {
    throw core::UsageError(std::string(flag) + " " + text + " is more than the device's " +
                           std::to_string(device_bytes >> 20) + " MiB");
  }
  return device_bytes > 0 ? static_cast<double>(bytes) / static_cast<double>(device_bytes) : 0.0;
}

}  // namespace engine::bench
