// A run's checkpoints by name: RUN.h5:latest, RUN.h5:best (the one keep_best marked in the run
// file) and RUN.h5:STEP, wherever a checkpoint is taken (--resume, --checkpoint).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace engine::train {

// "RUN.h5:best" -> {"RUN.h5", "best"}; "latest", "best" or a step count after the last ':'.
// nullopt when the text has no such suffix, or names an existing file as it is.
std::optional<std::pair<std::string, std::string>> checkpoint_name(const std::string& text);

// The path of the checkpoint `which` ("best" or a step) of the run file `run_file`, found in
// the run's own checkpoint folder (runs/<name>/<run>/). A UsageError, naming `flag` and the
// checkpoints the run has, when there is no such one.
std::string named_checkpoint(const std::string& run_file, const std::string& which,
                             const std::string& flag);

}  // namespace engine::train
