// A DLBS config's experiments (dlbs_config.hpp) as the engine's benchmark points: each DLBS name
// the engine has (docs/benchmarks.md's DLBS column: exp.model, exp.replica_batch, ...) becomes
// its parameter, exp.device_type and exp.num_replicas choose the device and the processes,
// exp.status = disabled makes the point inactive. The other names are DLBS's own or other
// frameworks' (exp.framework, exp.docker_image, tensorflow.*): not used by the engine, never
// refused.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/bench/dlbs_config.hpp"
#include "engine/bench/sweep.hpp"

namespace engine::bench {

// DLBS's exp.gpus ("0", "0,1,2,3", "4:5"; "" for none) as the engine's device, processes and,
// for GPUs other than the first ones, the launcher's CUDA_VISIBLE_DEVICES: no GPU is the CPU,
// GPU 0 alone is cuda, another alone cuda:N, several are world_size processes on cuda.
// A UsageError (naming `what`) for a word that is not an index.
struct DlbsGpus {
  std::string device;
  int64_t world_size = 1;
  std::string launcher;  // "CUDA_VISIBLE_DEVICES=4,5", or ""
};
DlbsGpus dlbs_gpus(const std::string& gpus, const std::string& what);

struct DlbsPoints {
  std::vector<PlannedPoint> plan;
  std::set<std::string> not_used;  // names of the experiments the engine does not use
};

// An experiment the engine cannot take (a batch size that is not a positive integer, a phase
// it does not have) is a core::UsageError naming the file, the experiment and the name. Two
// experiments that differ only in names the engine does not use are one point: the later ones
// are inactive, naming the first.
DlbsPoints dlbs_points(const std::vector<DlbsJson>& experiments, const std::string& path);

}  // namespace engine::bench
