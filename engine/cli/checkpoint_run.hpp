// What engine eval and engine predict share: the script rebuilt with the checkpoint's
// hyperparameters and seed, and the checkpoint's weights in its model.
#pragma once

#include <cxxopts.hpp>

#include <memory>
#include <string>

#include "engine/lua/session.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/spec.hpp"

namespace engine::cli {

struct CheckpointRun {
  std::unique_ptr<lua::Session> session;  // outlives the script
  std::unique_ptr<lua::TrainScript> script;
  train::TrainSpec spec;
  std::string checkpoint;  // resolved path
  train::CheckpointInfo info;
  int threads = 1;
};

// A checkpoint's hyperparameters as --set assignments, so a script is rebuilt as it was trained.
std::vector<std::string> hparam_assignments(const std::map<std::string, io::HParam>& hparams);

// --checkpoint takes a checkpoint or a run file (its latest checkpoint). --set applies after the
// checkpoint's hyperparameters.
std::unique_ptr<CheckpointRun> open_checkpoint_run(const std::string& script_path,
                                                   const cxxopts::ParseResult& flags);

}  // namespace engine::cli
