// A DLBS config's experiments (dlbs_config.hpp) as the engine's benchmark points: each DLBS name
// the engine has (docs/benchmarks.md's DLBS column: exp.model, exp.replica_batch, ...) becomes
// its parameter, exp.device_type and exp.num_replicas choose the device and the processes,
// exp.status = disabled makes the point inactive. The other names are DLBS's own or other
// frameworks' (exp.framework, exp.docker_image, tensorflow.*): not used by the engine, never
// refused.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "engine/bench/dlbs_config.hpp"
#include "engine/bench/sweep.hpp"

namespace engine::bench {

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
