#include "engine/distributed/launcher.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>

#include "engine/core/child_process.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/distributed/distributed_error.hpp"
#include "engine/distributed/group_watch.hpp"

namespace engine::distributed {
namespace {

constexpr auto kKillGrace = std::chrono::seconds(5);  // after the timeout, before SIGKILL
constexpr int kPollMilliseconds = 100;
// a rank that lost contact with the others: a consequence of a failure, not its cause
constexpr int kDistributedErrorCode = DistributedError::kExitCode;

struct Worker {
  int rank = 0;
  std::unique_ptr<core::ChildProcess> process;
  bool prefixed = false;  // its output read through a pipe, each line prefixed with its rank
  std::string partial;    // output after its last newline
  std::optional<core::ChildEnd> end;
  bool killed_here = false;  // the launcher's own SIGKILL: still running past the timeout
};

// The variables a worker gets besides the launcher's own environment.
std::vector<std::pair<std::string, std::string>> worker_variables(const World& world, int threads) {
  auto own = worker_environment(world);
  own.emplace_back(kLaunchedVariable, "1");
  own.emplace_back(kThreadsVariable, std::to_string(threads));
  own.emplace_back("OMP_NUM_THREADS", std::to_string(threads));
  return own;
}

void print_lines(Worker& w, const std::string& data) {
  w.partial += data;
  size_t start = 0;
  for (size_t end; (end = w.partial.find('\n', start)) != std::string::npos; start = end + 1) {
    std::fprintf(stderr, "[rank %d] %.*s\n", w.rank, static_cast<int>(end - start),
                 w.partial.data() + start);
  }
  w.partial.erase(0, start);
}

void drain(Worker& w, bool to_end) {
  if (!w.prefixed) return;
  const bool open =
      w.process->read_output([&](const std::string& chunk) { print_lines(w, chunk); }, to_end);
  if (!open) {  // its end: the last partial line too
    if (!w.partial.empty()) print_lines(w, "\n");
    w.prefixed = false;
  }
}

bool lost_contact(const core::ChildEnd& end) {
  return end.signal == 0 && end.exit_code == kDistributedErrorCode;
}

struct GroupResult {
  int exit_code = 0;
  bool interrupted = false;  // Ctrl-C or SIGTERM reached the launcher
  std::string failure;       // "rank 1 (pid 123) was killed by SIGKILL (killed)"
};

std::vector<Worker> start_workers(const LaunchOptions& options,
                                  const std::vector<std::string>& arguments) {
  std::vector<std::string> argv{core::executable_path()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::vector<Worker> workers;
  for (int local = 0; local < options.nproc; ++local) {
    World world;
    world.size = options.nproc * options.nnodes;
    world.rank = options.node_rank * options.nproc + local;
    world.local_rank = local;
    world.local_size = options.nproc;
    world.master_addr = options.master_addr;
    world.master_port = options.master_port;
    core::ChildSpec spec;
    spec.argv = argv;
    spec.what = "worker process " + std::to_string(world.rank);
    spec.variables = worker_variables(world, options.threads_per_worker);
    Worker w;
    w.rank = world.rank;
    w.prefixed = world.rank != 0;  // rank 0's output passes through unchanged
    spec.output = w.prefixed ? core::ChildOutput::kPipe : core::ChildOutput::kInherit;
    w.process = std::make_unique<core::ChildProcess>(spec);
    workers.push_back(std::move(w));
  }
  return workers;
}

// Waits up to one poll's time for output and passes on what came.
void pass_output(std::vector<Worker>& workers) {
  std::vector<pollfd> fds;
  std::vector<Worker*> owners;
  for (auto& w : workers) {
    if (w.prefixed && w.process->output() >= 0) {
      fds.push_back({w.process->output(), POLLIN, 0});
      owners.push_back(&w);
    }
  }
  const int ready = fds.empty() ? (usleep(kPollMilliseconds * 1000), 0)
                                : poll(fds.data(), fds.size(), kPollMilliseconds);
  for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) drain(*owners[i], false);
  }
}

// A process's state letter from /proc ('T': stopped by a signal, 't': by a debugger).
char process_state(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
}

// What the launcher says of a silence, and which of its own workers, if any, is the silent one.
std::string describe_silence(const Silence& silence, const LaunchOptions& options,
                             std::vector<Worker>& workers, Worker** silent_here) {
  *silent_here = nullptr;
  for (auto& w : workers) {
    if (w.rank == silence.rank && !w.end) *silent_here = &w;
  }
  const std::string seconds = std::to_string(silence.silent_for.count()) + " s";
  std::string who = "rank " + std::to_string(silence.rank);
  bool stopped = false;
  if (*silent_here) {
    const int pid = (*silent_here)->process->pid();
    const char state = process_state(pid);
    stopped = state == 'T' || state == 't';
    who += " (pid " + std::to_string(pid) + ", on this machine)";
  } else if (!silence.host.empty()) {
    who += " (on " + silence.host + ")";
  }
  std::string what = " sent no heartbeat for " + seconds;
  if (silence.store) {
    what = ", which serves the rendezvous store at " + options.master_addr + ":" +
           std::to_string(options.master_port) + ", " +
           (silence.error.empty()
                ? "answered nothing for " + seconds
                : "could not be reached for " + seconds + " (" + silence.error + ")");
  }
  if (*silent_here) {
    return who + what +
           (stopped ? ": it was stopped (SIGSTOP, or a debugger)"
                    : ": it was stuck (deadlocked, or waiting in a call that never returned)") +
           ", and the launcher killed it";
  }
  return who + what +
         ": it is stopped or stuck, or the network between it and this machine is down "
         "(--dist_timeout " +
         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options.timeout).count()) +
         " s)";
}

World watched_world(const LaunchOptions& options) {
  World world;
  world.size = options.nproc * options.nnodes;
  world.master_addr = options.master_addr;
  world.master_port = options.master_port;
  world.timeout = options.timeout;
  return world;
}

// Looks for a silence once one was not already found: the silent worker of this machine, if
// it is one, is killed at once (it answers no signal but SIGKILL); the others have the grace.
void watch_for_silence(GroupWatch& watch, const LaunchOptions& options,
                       std::vector<Worker>& workers, std::optional<std::string>& found,
                       std::optional<std::chrono::steady_clock::time_point>& kill_at) {
  if (found) return;
  const auto silence = watch.silence();
  if (!silence) return;
  Worker* silent_here = nullptr;
  found = describe_silence(*silence, options, workers, &silent_here);
  if (silent_here) {
    silent_here->killed_here = true;
    silent_here->process->signal(SIGKILL);
  }
  const auto grace = std::chrono::steady_clock::now() + kKillGrace;
  if (!kill_at || *kill_at > grace) kill_at = grace;
}

GroupResult run_group(const LaunchOptions& options, const std::vector<std::string>& arguments) {
  std::vector<Worker> workers = start_workers(options, arguments);
  GroupWatch watch(watched_world(options));
  std::optional<std::string> silence;  // what the watch found, when it found a silence
  GroupResult result;
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  int forwarded = core::interrupt_count();
  std::optional<size_t> first_failed;
  for (;;) {
    pass_output(workers);
    watch_for_silence(watch, options, workers, silence, kill_at);
    if (core::interrupt_count() != forwarded) {  // Ctrl-C or SIGTERM: each worker saves and stops
      forwarded = core::interrupt_count();
      result.interrupted = true;
      for (auto& w : workers) w.process->signal(core::pending_interrupt());
    }
    bool any_running = false;
    for (size_t i = 0; i < workers.size(); ++i) {
      auto& w = workers[i];
      if (w.end) continue;
      w.end = w.process->poll();
      if (!w.end) {
        any_running = true;
        continue;
      }
      drain(w, true);
      if (w.end->succeeded()) continue;
      // the first failure that is not another rank's lost contact with it names the cause
      if (!first_failed || (!lost_contact(*w.end) && lost_contact(*workers[*first_failed].end))) {
        first_failed = i;
      }
      if (!kill_at) kill_at = std::chrono::steady_clock::now() + options.timeout + kKillGrace;
    }
    if (!any_running) break;
    if (kill_at && std::chrono::steady_clock::now() > *kill_at) {
      for (auto& w : workers) {
        if (w.end || w.killed_here) continue;
        w.killed_here = true;
        w.process->signal(SIGKILL);
      }
    }
  }
  const bool own_cause = first_failed && !workers[*first_failed].killed_here &&
                         !lost_contact(*workers[*first_failed].end);
  if (silence && first_failed && !own_cause) {  // a hang somewhere: the cause, wherever it is
    result.exit_code = kDistributedErrorCode;
    result.failure = *silence;
  } else if (first_failed) {
    const auto& w = workers[*first_failed];
    const std::string who =
        "rank " + std::to_string(w.rank) + " (pid " + std::to_string(w.process->pid()) + ")";
    if (w.killed_here) {  // frozen: the others lost contact with it, and it never ended
      result.exit_code = kDistributedErrorCode;
      result.failure = who + " was still running " +
                       std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                          options.timeout + kKillGrace)
                                          .count()) +
                       " s after another rank failed, and the launcher killed it: it was stuck "
                       "(stopped, deadlocked, or waiting in a call that never returned)";
    } else {
      result.exit_code = w.end->code();
      result.failure = who + " " + w.end->describe();
    }
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
  // Ctrl-C reaches the launcher alone (each worker has a group of its own): passed on, each time
  core::InterruptScope interrupts(nullptr, core::SecondInterrupt::kCountEach);
  GroupResult result;
  for (int attempt = 0;; ++attempt) {
    if (options.note) {
      options.note(attempt == 0
                       ? "starting " + std::to_string(options.nproc) + " worker process" +
                             (options.nproc == 1 ? "" : "es") + ", rendezvous " +
                             options.master_addr + ":" + std::to_string(options.master_port)
                       : "restart " + std::to_string(attempt) + " of " +
                             std::to_string(options.max_restarts));
    }
    result = run_group(options, options.arguments(attempt));
    if (result.exit_code == 0 || result.interrupted || attempt >= options.max_restarts) break;
    std::fprintf(stderr, "error: %s; restarting the group\n", result.failure.c_str());
    if (options.nnodes == 1) options.master_port = free_port();  // the old one may linger
  }
  if (result.exit_code != 0 && !result.interrupted) {
    std::fprintf(stderr, "error: %s; the other ranks were stopped\n", result.failure.c_str());
  }
  return result.exit_code;
}

}  // namespace engine::distributed
