#include "engine/distributed/world.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "engine/core/errors.hpp"
#include "engine/core/threads.hpp"
#include "engine/distributed/launcher.hpp"

namespace engine::distributed {
namespace {

// A whole non-negative number, or a UsageError naming the variable. Slurm writes per-node
// task counts as "2(x3)": the leading number is the count.
int read_count(const Environment& environment, const std::string& name, bool leading = false) {
  const auto text = environment(name);
  if (!text) return -1;
  size_t used = 0;
  long value = -1;
  try {
    value = std::stol(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || value < 0 || value > 1000000 || (!leading && used != text->size())) {
    throw core::UsageError("the environment variable " + name + "='" + *text +
                           "' is not a whole number >= 0");
  }
  return static_cast<int>(value);
}

int required_count(const Environment& environment, const std::string& name,
                   const std::string& because) {
  const int value = read_count(environment, name);
  if (value < 0) throw core::UsageError(because + " but " + name + " is not set");
  return value;
}

void check_world(const World& world, const std::string& rank_name, const std::string& size_name) {
  if (world.size < 1) throw core::UsageError(size_name + "=0: the world needs a process");
  if (world.rank >= world.size) {
    throw core::UsageError(rank_name + "=" + std::to_string(world.rank) +
                           " is outside the world (" + size_name + "=" +
                           std::to_string(world.size) + ", ranks count from 0)");
  }
  if (world.locality_known() && (world.local_size < 1 || world.local_rank >= world.local_size)) {
    throw core::UsageError("local rank " + std::to_string(world.local_rank) +
                           " is outside this machine's " + std::to_string(world.local_size) +
                           " processes");
  }
}

// The scheduler's local rank and local size (-1: not given); a placeholder for what it did
// not give.
void set_locality(World& world, int local_rank, int local_size) {
  world.local_rank_known = local_rank >= 0;
  world.local_size_known = local_size >= 0;
  world.local_rank = std::max(local_rank, 0);
  world.local_size = local_size >= 0 ? local_size : 1;
}

// Whether the world spans machines as far as the variables say: fewer local ranks than ranks,
// or Slurm's node count above one.
bool several_machines(const Environment& environment, const World& world) {
  if (world.local_size_known) return world.local_size < world.size;
  const int nodes = std::max(read_count(environment, "SLURM_JOB_NUM_NODES"),
                             read_count(environment, "SLURM_NNODES"));
  return nodes > 1;
}

// Slurm's job variables are in an sbatch script's own environment too (SLURM_PROCID=0,
// SLURM_NTASKS=N; seen with Slurm 22.05), where one process runs: without srun it would be
// rank 0 of N, waiting for ranks that never come. Only srun's steps have SLURM_STEP_ID.
void check_started_by_srun(const Environment& environment, const World& world) {
  if (world.size <= 1 || environment("SLURM_STEP_ID") || environment("SLURM_STEPID")) return;
  throw core::UsageError("SLURM_NTASKS=" + std::to_string(world.size) +
                         " but this process was not started by srun (no SLURM_STEP_ID): in an "
                         "sbatch script, start the ranks with `srun engine train ...` "
                         "(docs/distributed.md, Slurm)");
}

}  // namespace

std::string World::describe() const {
  const std::string local =
      locality_known() ? "local " + std::to_string(local_rank) + " of " + std::to_string(local_size)
                       : "local rank to be found";
  return "rank " + std::to_string(rank) + " of " + std::to_string(size) + " (" + local +
         "), rendezvous " + master_addr + ":" + std::to_string(master_port);
}

Environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

torch::Device rank_device(torch::Device device, const World& world) {
  if (device.is_cuda() && !device.has_index() && world.distributed()) {
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(world.local_rank));
  }
  return device;
}

World world_from_environment(const Environment& environment) {
  World world;
  const bool torchrun = environment("WORLD_SIZE") || environment("RANK");
  const bool slurm = !torchrun && environment("SLURM_PROCID") && environment("SLURM_NTASKS");
  if (torchrun) {
    const std::string because = "RANK or WORLD_SIZE is set (torchrun's variables)";
    world.source = "torchrun variables";
    world.launched = environment(kLaunchedVariable).has_value();
    world.size = required_count(environment, "WORLD_SIZE", because);
    world.rank = required_count(environment, "RANK", because);
    const int local_rank = read_count(environment, "LOCAL_RANK");
    const int local_size = read_count(environment, "LOCAL_WORLD_SIZE");
    set_locality(world, local_rank, local_size);
    check_world(world, "RANK", "WORLD_SIZE");
  } else if (slurm) {
    world.source = "Slurm variables";
    world.size = read_count(environment, "SLURM_NTASKS");
    world.rank = read_count(environment, "SLURM_PROCID");
    const int local_rank = read_count(environment, "SLURM_LOCALID");
    const int local_size = read_count(environment, "SLURM_NTASKS_PER_NODE", true);
    set_locality(world, local_rank, local_size);
    check_world(world, "SLURM_PROCID", "SLURM_NTASKS");
    check_started_by_srun(environment, world);
  } else {
    return world;
  }
  if (const auto addr = environment("MASTER_ADDR"); addr && !addr->empty()) {
    world.master_addr = *addr;
  } else if (several_machines(environment, world)) {
    throw core::UsageError("a world of " + std::to_string(world.size) +
                           " processes over several machines (" + world.source +
                           ") needs MASTER_ADDR: the address of the machine that runs rank 0");
  }
  if (const auto port = master_port_from(environment)) world.master_port = *port;
  return world;
}

std::optional<int> master_port_from(const Environment& environment) {
  const int port = read_count(environment, "MASTER_PORT");
  if (port < 0) return std::nullopt;
  if (port == 0 || port > 65535) {
    throw core::UsageError("MASTER_PORT=" + std::to_string(port) + " is not a port (1-65535)");
  }
  return port;
}

ThreadChoice choose_threads(int requested, const World& world, const Environment& environment) {
  if (const auto share = environment(kThreadsVariable)) {
    return {std::max(1, std::atoi(share->c_str())), "the launcher's share of the cores"};
  }
  if (requested < 0) throw core::UsageError("--threads must be 0 (all cores) or a positive number");
  if (requested > 0) return {requested, "--threads"};
  if (const auto omp = environment("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(omp->c_str(), &end, 10);
    if (end != omp->c_str() && *end == '\0' && n > 0 && n <= 4096) {
      return {static_cast<int>(n), "OMP_NUM_THREADS"};
    }
  }
  const int cores = core::available_cores();
  if (world.distributed() && world.local_size > 1) {
    return {std::max(1, cores / world.local_size), std::to_string(cores) +
                                                       " cores shared by this machine's " +
                                                       std::to_string(world.local_size) + " ranks"};
  }
  return {cores, "all cores"};
}

std::vector<std::pair<std::string, std::string>> worker_environment(const World& world) {
  return {{"RANK", std::to_string(world.rank)},
          {"WORLD_SIZE", std::to_string(world.size)},
          {"LOCAL_RANK", std::to_string(world.local_rank)},
          {"LOCAL_WORLD_SIZE", std::to_string(world.local_size)},
          {"MASTER_ADDR", world.master_addr},
          {"MASTER_PORT", std::to_string(world.master_port)}};
}

}  // namespace engine::distributed
