// What the live page reads (live_server.hpp), as JSON: the folder's look (its files, with those
// that cannot be read and why, and the report's tables of them with what each column is), and
// one run file whole (facts, hyperparameters, every metric series, checkpoints).
#pragma once

#include <optional>
#include <string>

#include "engine/report/live_folder.hpp"

namespace engine::report {

// {"folder", "files": [{path, kind, state, bytes}], "tables": [{name, title, columns, rows,
// role, hparams, metrics | metric, x}], "notes": [...]}. role: runs | evaluations | points |
// pivot | leaderboard. Numbers stay numbers; NaN and empty cells are null.
std::string folder_json(LiveFolder& folder);

// {"path", "name", "status", "held", "attributes", "hparams", "splits": {split: {step, epoch,
// time, series: {metric: [...]}}}, "checkpoints": [{path, step}], "latest_checkpoint", "script"};
// nullopt when the folder holds no run file of that path.
std::optional<std::string> run_json(LiveFolder& folder, const std::string& path);

}  // namespace engine::report
