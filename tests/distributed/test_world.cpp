#include <doctest/doctest.h>

#include <map>

#include "engine/core/errors.hpp"
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

TEST_CASE("torchrun's variables, as a PyTorchJob sets them") {
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
