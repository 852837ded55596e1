// The flags of data-parallel training (docs/distributed.md): --nproc starts the workers on
// this machine (torchrun's --nproc_per_node), --nnodes --node_rank --master_addr --master_port
// join machines, --dist_timeout bounds every wait, --max_restarts restarts a failed group from
// its last checkpoint. A process that a launcher or a scheduler started reads its place from
// the environment instead.
#pragma once

#include <cxxopts.hpp>

#include <optional>
#include <string>
#include <vector>

#include "engine/distributed/world.hpp"

namespace engine::cli {

void add_distributed_flags(cxxopts::Options& options);

// With --nproc, in a process no launcher started: starts the workers (each runs `command`
// with the same arguments, and a share of `requested_threads`, 0 meaning all cores) and returns
// the group's exit code. Otherwise nothing.
std::optional<int> launch_if_asked(const cxxopts::ParseResult& flags, const std::string& command,
                                   const std::vector<std::string>& args, int requested_threads);

// This process's place: from torchrun's or Slurm's variables (a launcher's worker, a
// scheduler's task), with --dist_timeout; one process when none is set.
distributed::World world_of(const cxxopts::ParseResult& flags);

// distributed::choose_threads applied to libtorch; a rank of a distributed world says what it
// chose. Returns the count, which the run file records.
int apply_threads(int requested, const distributed::World& world);

// What a resume hint adds to start this world again: the launch flags as given on the command
// line (" --nproc 2 --nnodes 2 --node_rank 0 ..."), and where the other processes come from
// when this command does not start them all (" (on every rank, ...)"); "" for one process.
std::string resume_launch(const std::vector<std::string>& args, const distributed::World& world);

// Rank 0 of a launched group tells its launcher the run file it writes (for restarts).
void tell_launcher_run_file(const std::string& path);

}  // namespace engine::cli
