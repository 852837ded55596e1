#include <doctest/doctest.h>

#include <map>

#include "engine/core/errors.hpp"
#include "engine/core/threads.hpp"
#include "engine/distributed/launcher.hpp"
#include "engine/distributed/locality.hpp"
#include "engine/distributed/world.hpp"

using namespace engine;

namespace {

distributed::Environment fake(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("no launcher's or scheduler's variables: one process") {
  const auto world = distributed::world_from_environment(fake({}));
  CHECK(world.size == 1);
  CHECK_FALSE(world.distributed());
}

TEST_CASE("a world of one: a group only when the engine's launcher started it (--nproc 1)") {
  const std::map<std::string, std::string> one{{"RANK", "0"}, {"WORLD_SIZE", "1"}};
  CHECK_FALSE(distributed::world_from_environment(fake(one)).distributed());  // srun -n 1
  auto launched = one;
  launched[distributed::kLaunchedVariable] = "1";
  const auto world = distributed::world_from_environment(fake(launched));
  CHECK(world.size == 1);
  CHECK(world.distributed());
}

TEST_CASE("torchrun's variables, with this machine's ranks") {
  const auto world = distributed::world_from_environment(fake({{"RANK", "3"},
                                                               {"WORLD_SIZE", "4"},
                                                               {"LOCAL_RANK", "1"},
                                                               {"LOCAL_WORLD_SIZE", "2"},
                                                               {"MASTER_ADDR", "10.0.0.7"},
                                                               {"MASTER_PORT", "23456"}}));
  CHECK(world.rank == 3);
  CHECK(world.size == 4);
  CHECK(world.local_rank == 1);
  CHECK(world.local_size == 2);
  CHECK(world.master_addr == "10.0.0.7");
  CHECK(world.master_port == 23456);
  CHECK(world.distributed());
  // what a launcher hands its workers reads back the same
  std::map<std::string, std::string> handed;
  for (const auto& [k, v] : distributed::worker_environment(world)) handed[k] = v;
  const auto again = distributed::world_from_environment(fake(handed));
  CHECK(again.describe() == world.describe());
}

TEST_CASE("Slurm's variables when torchrun's are absent") {
  const auto world = distributed::world_from_environment(fake({{"SLURM_PROCID", "2"},
                                                               {"SLURM_NTASKS", "4"},
                                                               {"SLURM_LOCALID", "0"},
                                                               {"SLURM_NTASKS_PER_NODE", "2(x2)"},
                                                               {"SLURM_STEP_ID", "0"},
                                                               {"MASTER_ADDR", "node01"}}));
  CHECK(world.rank == 2);
  CHECK(world.size == 4);
  CHECK(world.local_size == 2);
  CHECK(world.master_addr == "node01");
  CHECK(world.master_port == 29500);
  CHECK(world.source == "Slurm variables");
}

TEST_CASE("bad variables are named") {
  auto message = [](std::map<std::string, std::string> values) {
    try {
      distributed::world_from_environment(fake(values));
    } catch (const core::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message({{"RANK", "x"}, {"WORLD_SIZE", "2"}}).find("RANK='x'") != std::string::npos);
  CHECK(message({{"RANK", "2"}, {"WORLD_SIZE", "2"}}).find("outside the world") !=
        std::string::npos);
  CHECK(message({{"RANK", "0"}}).find("WORLD_SIZE is not set") != std::string::npos);
  CHECK(
      message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}).find("MASTER_PORT") !=
      std::string::npos);
  // several machines and no address for rank 0's
  CHECK(message({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}})
            .find("needs MASTER_ADDR") != std::string::npos);
}

TEST_CASE("a PyTorchJob's variables: the locality is left for the group to find") {
  // Kubeflow's training operator sets exactly these four
  const auto world = distributed::world_from_environment(fake(
      {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.0.0.7"}, {"MASTER_PORT", "23456"}}));
  CHECK(world.rank == 1);
  CHECK_FALSE(world.locality_known());
  CHECK_FALSE(world.local_rank_known);
  CHECK(world.local_rank == 0);  // placeholders, not "local 1 of 2"
  CHECK(world.local_size == 1);
  CHECK(world.describe() == "rank 1 of 2 (local rank to be found), rendezvous 10.0.0.7:23456");
  // a cuda device waits for the found local rank: a placeholder picks cuda:0, never cuda:RANK
  CHECK(distributed::rank_device(torch::Device(torch::kCUDA), world).index() == 0);
}

TEST_CASE("Slurm without --ntasks-per-node: SLURM_LOCALID kept, the local size found later") {
  const auto world = distributed::world_from_environment(fake({{"SLURM_PROCID", "3"},
                                                               {"SLURM_NTASKS", "4"},
                                                               {"SLURM_LOCALID", "1"},
                                                               {"SLURM_NNODES", "2"},
                                                               {"SLURM_STEP_ID", "0"},
                                                               {"MASTER_ADDR", "node01"}}));
  CHECK(world.local_rank_known);
  CHECK(world.local_rank == 1);
  CHECK_FALSE(world.local_size_known);
  // two nodes and no MASTER_ADDR: the rendezvous cannot be on this machine's loopback
  try {
    distributed::world_from_environment(fake({{"SLURM_PROCID", "0"},
                                              {"SLURM_NTASKS", "4"},
                                              {"SLURM_NNODES", "2"},
                                              {"SLURM_STEP_ID", "0"}}));
    FAIL("two nodes without MASTER_ADDR were accepted");
  } catch (const core::UsageError& e) {
    CHECK(std::string(e.what()).find("needs MASTER_ADDR") != std::string::npos);
  }
}

TEST_CASE("Slurm's variables in an sbatch script itself (no srun) are refused at once") {
  // what the batch step of `sbatch -n 2` has (seen with Slurm 22.05): no SLURM_STEP_ID
  try {
    distributed::world_from_environment(
        fake({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}}));
    FAIL("rank 0 of 2 outside srun was accepted");
  } catch (const core::UsageError& e) {
    CHECK(std::string(e.what()).find("not started by srun (no SLURM_STEP_ID)") !=
          std::string::npos);
    CHECK(std::string(e.what()).find("srun engine train") != std::string::npos);
  }
  // one task needs no srun
  CHECK(distributed::world_from_environment(fake({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}))
            .size == 1);
}

TEST_CASE("ranks on one machine found from their hosts' identities") {
  const std::vector<std::string> hosts = {"a 10.0.0.1", "b 10.0.0.2", "a 10.0.0.1", "b 10.0.0.2",
                                          "a 10.0.0.1"};
  CHECK(distributed::locality_from_hosts(hosts, 0).local_rank == 0);
  CHECK(distributed::locality_from_hosts(hosts, 0).local_size == 3);
  CHECK(distributed::locality_from_hosts(hosts, 4).local_rank == 2);
  CHECK(distributed::locality_from_hosts(hosts, 3).local_rank == 1);
  CHECK(distributed::locality_from_hosts(hosts, 3).local_size == 2);
  // the route to the rendezvous picks the address: loopback for a rendezvous on loopback
  CHECK(distributed::address_towards("127.0.0.1", 29500) == "127.0.0.1");
  CHECK(distributed::address_towards("no-such-host.invalid", 29500).empty());
  distributed::World world;
  CHECK(distributed::host_identity(world).find(" 127.0.0.1") != std::string::npos);
}

TEST_CASE("threads: the launcher's share, --threads, OMP_NUM_THREADS, cores per local rank") {
  distributed::World two_here;
  two_here.size = 4;
  two_here.local_size = 2;
  const auto choose = [&](int requested, std::map<std::string, std::string> env) {
    return distributed::choose_threads(requested, two_here, fake(env));
  };
  CHECK(choose(8, {{"ENGINE_WORKER_THREADS", "3"}}).threads == 3);
  CHECK(choose(8, {{"OMP_NUM_THREADS", "2"}}).threads == 8);
  CHECK(choose(8, {}).reason == "--threads");
  CHECK(choose(0, {{"OMP_NUM_THREADS", "2"}}).threads == 2);
  CHECK(choose(0, {{"OMP_NUM_THREADS", "2"}}).reason == "OMP_NUM_THREADS");
  const int cores = engine::core::available_cores();
  CHECK(choose(0, {{"OMP_NUM_THREADS", "lots"}}).threads == std::max(1, cores / 2));
  CHECK(choose(0, {}).reason == std::to_string(cores) + " cores shared by this machine's 2 ranks");
  CHECK(distributed::choose_threads(0, distributed::World{}, fake({})).threads == cores);
  CHECK_THROWS_AS(choose(-1, {}), core::UsageError);
}
