// The statuses the engine records, each a closed set: files store them by name (the names are
// the file formats', docs/run-files.md and HDF5_SCHEMA.md), code holds them as these enums.
#pragma once

#include <optional>
#include <string>

namespace engine::core {

// A run, benchmark or search file's /status: how the command that writes it stands.
enum class FileStatus { kRunning, kCompleted, kFailed, kInterrupted };
// A benchmark point's row.
enum class PointStatus { kOk, kFailed, kTimeout, kSkipped, kInactive };
// A search trial.
enum class TrialStatus { kRunning, kPaused, kCompleted, kStopped, kFailed, kInterrupted };

const char* name_of(FileStatus status);   // running | completed | failed | interrupted
const char* name_of(PointStatus status);  // ok | failed | timeout | skipped | inactive
const char* name_of(TrialStatus status);  // running | paused | completed | stopped | failed |
                                          // interrupted
// The status a stored name stands for; nullopt for a name that is none of them.
std::optional<PointStatus> point_status(const std::string& name);
std::optional<TrialStatus> trial_status(const std::string& name);

}  // namespace engine::core
