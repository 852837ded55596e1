// Where this process stands among the processes of one training job: its rank, the world's
// size, its place on its machine, and where rank 0's rendezvous store listens. Read from
// torchrun's environment contract (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), which Kubernetes' PyTorchJob sets too, or, when those are absent, from Slurm's
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE), so that one binary runs
// under any scheduler that starts one process per slot.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace engine::distributed {

struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::chrono::milliseconds timeout{60000};  // rendezvous and every collective
  std::string source;  // "torchrun variables", "Slurm variables", "--nproc", "" (one process)
  // Whether the scheduler said this rank's place on its machine (LOCAL_RANK, SLURM_LOCALID) and
  // how many ranks share the machine (LOCAL_WORLD_SIZE, SLURM_NTASKS_PER_NODE). Kubeflow's
  // PyTorchJob sets neither, Slurm without --ntasks-per-node only the first: what is not said
  // is a placeholder (0 of 1) until the group finds it from the ranks' hosts
  // (Group::find_locality).
  bool local_rank_known = true;
  bool local_size_known = true;

  // Started by the engine's launcher (--nproc): even `--nproc 1` is a data-parallel world, of
  // one, through the same group as N (as torchrun --nproc_per_node 1 is to a PyTorch script).
  bool launched = false;

  bool distributed() const { return size > 1 || launched; }
  bool locality_known() const { return local_rank_known && local_size_known; }
  // "rank 1 of 4 (local 1 of 2), rendezvous 10.0.0.1:29500"; "(local rank to be found)" while
  // the locality is not known
  std::string describe() const;
};

// Reads one environment variable; nothing when unset. Tests pass their own.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;
Environment process_environment();

// The world the environment describes: one process when neither torchrun's nor Slurm's
// variables are set. A UsageError names the variable at fault (not a number, a rank outside
// the world, MASTER_ADDR missing for a world of several machines).
World world_from_environment(const Environment& environment);
// MASTER_PORT when it is set; a UsageError when it is not a port.
std::optional<int> master_port_from(const Environment& environment);

// A rank's device: cuda without an index means this machine's GPU LOCAL_RANK in a distributed
// world, as engine train reads --device cuda; any other device is kept.
torch::Device rank_device(torch::Device device, const World& world);

// The threads a process of this world uses, and why: a worker of engine's launcher (--nproc)
// takes its share of the machine's (ENGINE_WORKER_THREADS), whatever --threads says; otherwise
// --threads (`requested`, 0 when not given), else OMP_NUM_THREADS, else the machine's cores
// divided among the world's ranks on this machine (its local size), else all cores. A negative
// request is a UsageError naming --threads.
struct ThreadChoice {
  int threads = 1;
  std::string reason;  // "OMP_NUM_THREADS", "16 cores shared by this machine's 2 ranks", ...
};
ThreadChoice choose_threads(int requested, const World& world, const Environment& environment);

// The variables a launcher sets for one of its workers, torchrun's names.
std::vector<std::pair<std::string, std::string>> worker_environment(const World& world);

}  // namespace engine::distributed
