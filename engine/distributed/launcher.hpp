// What `engine train SCRIPT --nproc N` does, as torchrun does it: starts N worker processes of
// this program on this machine with torchrun's variables set (one share of the threads each),
// passes rank 0's output through and prefixes the others' lines with their rank, forwards
// Ctrl-C and SIGTERM, and when a worker fails stops the rest (they normally stop by themselves,
// their collectives failing; those still running after the timeout are killed) and names the
// one that failed first. With restarts allowed, the whole group is started again, with the
// arguments the caller gives for that attempt (a --resume from the last checkpoint).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "engine/distributed/world.hpp"

namespace engine::distributed {

struct LaunchOptions {
  int nproc = 1;      // workers on this machine
  int nnodes = 1;     // machines, each running a launcher
  int node_rank = 0;  // this machine's place among them
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: a free port of this machine (one machine only)
  std::chrono::milliseconds timeout{60000};
  int threads_per_worker = 1;
  int max_restarts = 0;
  // The worker's arguments (after the program) for attempt 0, 1, ...
  std::function<std::vector<std::string>(int attempt)> arguments;
  // Told each time a group of workers is started (attempt) and why a restart happens.
  std::function<void(const std::string&)> note;
};

// Variables the launcher sets in its workers besides torchrun's: a worker that sees
// kLaunchedVariable does not launch again; kThreadsVariable is its share of the threads.
inline constexpr const char* kLaunchedVariable = "ENGINE_LAUNCHED";
inline constexpr const char* kThreadsVariable = "ENGINE_WORKER_THREADS";

// Runs the workers to the end; returns the exit code: 0 when every worker succeeded, else the
// first failed worker's (128 + signal for a signal). Throws UsageError for impossible options,
// IoError when a process cannot be started.
int launch(const LaunchOptions& options);

// A TCP port that nothing on this machine listens on now.
int free_port();

}  // namespace engine::distributed
