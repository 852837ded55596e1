// Checkpoints (HDF5_SCHEMA.md): the model's tensors, the optimizer's state (libtorch's own
// serialization, plus a readable copy per parameter), the scheduler, the trainer's counters and
// every random generator's state. Written to a temporary file, then renamed, so a crash never
// leaves a half-written checkpoint under the final name.
#pragma once

#include <string>
#include <utility>

#include "engine/data/source.hpp"
#include "engine/train/spec.hpp"
#include "engine/train/trainer_state.hpp"

namespace engine::train {

struct CheckpointInfo {
  std::string run_file;  // the run file the checkpoint belongs to
  std::string name;      // the name of the script that wrote it ("" for an older checkpoint)
  uint64_t seed = 0;
  int64_t step = 0;
  std::map<std::string, io::HParam> hparams;
  std::map<std::string, int64_t> rows;  // rows per split of the run file at the checkpoint
};

void save_checkpoint(const std::string& path, const TrainSpec& spec, const TrainerState& state,
                     const std::string& run_file);
// Restores the model, optimizer, scheduler and random generators into spec (built from the same
// script) and returns the trainer's state. A DataError names the checkpoint and what differs.
TrainerState load_checkpoint(const std::string& path, TrainSpec& spec);
// The model's tensors only (engine eval, engine predict).
void load_model_weights(const std::string& path, torch::nn::Module& module);
// The checkpoint's run file, seed, step and hyperparameters, without loading anything else.
CheckpointInfo read_checkpoint_info(const std::string& path);
// New data from `input` read as `trained_on` (the script's source) read its own, with what the
// checkpoint's /data group kept of the training source (a CSV's statistics): engine predict.
std::shared_ptr<data::Source> prediction_source(const std::string& checkpoint,
                                                const data::Source& trained_on,
                                                const std::string& input);
// A run file's latest checkpoint, or the one named after it (RUN.h5:best, RUN.h5:STEP,
// RUN.h5:latest: checkpoint_by_name.hpp); a path that is a checkpoint is returned as it is. flag is
// the option the path came from (--resume, --checkpoint), which every error names. A checkpoint in
// the run's folder newer than the one the run file records (a kill between the checkpoint's
// rename into place and the run file's note of it) is the latest.
std::string resolve_checkpoint(const std::string& run_file_or_checkpoint, const std::string& flag);
// The checkpoint of the highest step in a run file's folder (runs/<name>/<run>/ckpt-<step>.h5,
// each put in place whole by a rename), and that step; {"", -1} when there is none.
std::pair<std::string, int64_t> newest_checkpoint_on_disk(const std::string& run_file);

}  // namespace engine::train
