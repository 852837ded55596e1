#include "engine/dist/launcher.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>

#include "engine/core/errors.hpp"
#include "engine/core/signals.hpp"
#include "engine/dist/distributed_error.hpp"

extern char** environ;

namespace engine::dist {
namespace {

constexpr auto kKillGrace = std::chrono::seconds(5);  // after the timeout, before SIGKILL
constexpr int kPollMilliseconds = 100;
// a rank that lost contact with the others: a consequence of a failure, not its cause
constexpr int kDistributedErrorCode = DistributedError::kExitCode;

volatile sig_atomic_t g_signal = 0;
volatile sig_atomic_t g_signals = 0;

void on_signal(int signal) {
  g_signal = signal;
  g_signals = g_signals + 1;
}

struct Worker {
  int rank = 0;
  pid_t pid = -1;
  int output = -1;      // read end of its prefixed output; -1 when it writes to ours
  std::string partial;  // output after its last newline
  bool running = true;
  int status = 0;
};

std::string executable_path() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) throw core::IoError("cannot find this program's path (/proc/self/exe)");
  return std::string(buffer, static_cast<size_t>(n));
}

// environ without the variables the launcher sets, then those.
std::vector<std::string> worker_variables(const World& world, int threads) {
  auto own = worker_environment(world);
  own.emplace_back(kLaunchedVariable, "1");
  own.emplace_back(kThreadsVariable, std::to_string(threads));
  own.emplace_back("OMP_NUM_THREADS", std::to_string(threads));
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [key, value] : own) replaced |= key == name;
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [key, value] : own) out.push_back(key + "=" + value);
  return out;
}

// Between fork and exec only async-signal-safe calls.
[[noreturn]] void become_worker(const std::vector<char*>& argv, const std::vector<char*>& envp,
                                int output, pid_t launcher) {
  setpgid(0, 0);  // Ctrl-C reaches the launcher, which forwards it once
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) _exit(1);
  if (output >= 0) {
    dup2(output, STDOUT_FILENO);
    dup2(output, STDERR_FILENO);
  }
  close_range(STDERR_FILENO + 1, ~0U, 0);  // none of the launcher's files (an HDF5 lock)
  execve(argv[0], argv.data(), envp.data());
  static const char message[] = "error: cannot start a worker process\n";
  ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  _exit(127);
}

void print_lines(Worker& w, const char* data, size_t n) {
  w.partial.append(data, n);
  size_t start = 0;
  for (size_t end; (end = w.partial.find('\n', start)) != std::string::npos; start = end + 1) {
    std::fprintf(stderr, "[rank %d] %.*s\n", w.rank, static_cast<int>(end - start),
                 w.partial.data() + start);
  }
  w.partial.erase(0, start);
}

void drain(Worker& w, bool to_end) {
  if (w.output < 0) return;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(w.output, buffer, sizeof buffer);
    if (n > 0) {
      print_lines(w, buffer, static_cast<size_t>(n));
      if (!to_end) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && !to_end) return;
    if (n == 0 || to_end) {  // its end: the last partial line too
      if (!w.partial.empty()) print_lines(w, "\n", 1);
      close(w.output);
      w.output = -1;
    }
    return;
  }
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) return "was killed by " + core::signal_description(WTERMSIG(status));
  return "exited with code " + std::to_string(exit_code_of(status));
}

struct GroupResult {
  int exit_code = 0;
  bool interrupted = false;  // Ctrl-C or SIGTERM reached the launcher
  std::string failure;       // "rank 1 (pid 123) was killed by SIGKILL (killed)"
};

GroupResult run_group(const LaunchOptions& options, const std::vector<std::string>& arguments) {
  const std::string program = executable_path();
  std::vector<std::string> args{program};
  args.insert(args.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<Worker> workers;
  const pid_t launcher = getpid();
  for (int local = 0; local < options.nproc; ++local) {
    World world;
    world.size = options.nproc * options.nnodes;
    world.rank = options.node_rank * options.nproc + local;
    world.local_rank = local;
    world.local_size = options.nproc;
    world.master_addr = options.master_addr;
    world.master_port = options.master_port;
    auto variables = worker_variables(world, options.threads_per_worker);
    std::vector<char*> envp;
    for (auto& v : variables) envp.push_back(v.data());
    envp.push_back(nullptr);
    Worker w;
    w.rank = world.rank;
    int fds[2] = {-1, -1};
    const bool prefixed = world.rank != 0;
    if (prefixed && pipe2(fds, O_CLOEXEC) != 0) {
      throw core::IoError(std::string("cannot make a pipe for a worker: ") + std::strerror(errno));
    }
    std::fflush(nullptr);
    w.pid = fork();
    if (w.pid < 0)
      throw core::IoError(std::string("cannot start a worker: ") + std::strerror(errno));
    if (w.pid == 0) become_worker(argv, envp, prefixed ? fds[1] : -1, launcher);
    setpgid(w.pid, w.pid);
    if (prefixed) {
      close(fds[1]);
      w.output = fds[0];
      fcntl(w.output, F_SETFL, fcntl(w.output, F_GETFL) | O_NONBLOCK);
    }
    workers.push_back(std::move(w));
  }

  GroupResult result;
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  int forwarded = g_signals;
  std::optional<size_t> first_failed;
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Worker*> owners;
    for (auto& w : workers) {
      if (w.output >= 0) {
        fds.push_back({w.output, POLLIN, 0});
        owners.push_back(&w);
      }
    }
    const int ready = fds.empty() ? (usleep(kPollMilliseconds * 1000), 0)
                                  : poll(fds.data(), fds.size(), kPollMilliseconds);
    for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) drain(*owners[i], false);
    }
    if (g_signals != forwarded) {  // Ctrl-C or SIGTERM: each worker saves and stops
      forwarded = g_signals;
      result.interrupted = true;
      for (auto& w : workers) {
        if (w.running) kill(w.pid, g_signal);
      }
    }
    bool any_running = false;
    for (size_t i = 0; i < workers.size(); ++i) {
      auto& w = workers[i];
      if (!w.running) continue;
      int status = 0;
      const pid_t done = waitpid(w.pid, &status, WNOHANG);
      if (done != w.pid) {
        any_running = true;
        continue;
      }
      w.running = false;
      w.status = status;
      drain(w, true);
      if (exit_code_of(status) == 0) continue;
      // the first failure that is not another rank's lost contact with it names the cause
      const bool consequence = WIFEXITED(status) && WEXITSTATUS(status) == kDistributedErrorCode;
      if (!first_failed || (!consequence && WIFEXITED(workers[*first_failed].status) &&
                            WEXITSTATUS(workers[*first_failed].status) == kDistributedErrorCode)) {
        first_failed = i;
      }
      if (!kill_at) kill_at = std::chrono::steady_clock::now() + options.timeout + kKillGrace;
    }
    if (!any_running) break;
    if (kill_at && std::chrono::steady_clock::now() > *kill_at) {
      for (auto& w : workers) {
        if (w.running) kill(w.pid, SIGKILL);
      }
    }
  }
  if (first_failed) {
    const auto& w = workers[*first_failed];
    result.exit_code = exit_code_of(w.status);
    result.failure = "rank " + std::to_string(w.rank) + " (pid " + std::to_string(w.pid) + ") " +
                     how_it_ended(w.status);
  }
  return result;
}

}  // namespace

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw core::IoError(std::string("cannot open a socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  if (!ok) throw core::IoError(std::string("cannot find a free port: ") + std::strerror(errno));
  return ntohs(address.sin_port);
}

int launch(const LaunchOptions& given) {
  LaunchOptions options = given;
  if (options.nproc < 1) throw core::UsageError("--nproc needs at least 1 process");
  if (options.nnodes < 1) throw core::UsageError("--nnodes needs at least 1 machine");
  if (options.node_rank < 0 || options.node_rank >= options.nnodes) {
    throw core::UsageError("--node_rank " + std::to_string(options.node_rank) +
                           " is outside --nnodes " + std::to_string(options.nnodes) +
                           " (machines count from 0)");
  }
  if (options.max_restarts < 0) throw core::UsageError("--max_restarts cannot be negative");
  if (options.master_port == 0) {
    options.master_port = options.nnodes == 1 ? free_port() : World{}.master_port;
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  GroupResult result;
  for (int attempt = 0;; ++attempt) {
    if (options.note) {
      options.note(attempt == 0 ? "starting " + std::to_string(options.nproc) +
                                      " worker processes, rendezvous " + options.master_addr + ":" +
                                      std::to_string(options.master_port)
                                : "restart " + std::to_string(attempt) + " of " +
                                      std::to_string(options.max_restarts));
    }
    result = run_group(options, options.arguments(attempt));
    if (result.exit_code == 0 || result.interrupted || attempt >= options.max_restarts) break;
    std::fprintf(stderr, "error: %s; restarting the group\n", result.failure.c_str());
    if (options.nnodes == 1) options.master_port = free_port();  // the old one may linger
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (result.exit_code != 0 && !result.interrupted) {
    std::fprintf(stderr, "error: %s; the other ranks were stopped\n", result.failure.c_str());
  }
  return result.exit_code;
}

}  // namespace engine::dist
