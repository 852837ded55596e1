// Reading the engine's result files back (HDF5_SCHEMA.md): which kind a file is, and a run
// file whole — attributes, hyperparameters, metric series, checkpoints — including one that a
// process is still writing, or that a killed process left with status "running".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/io/hdf5.hpp"
#include "engine/io/hparam.hpp"

namespace engine::io {

enum class ResultKind { kRun, kBenchmark, kSearch, kCheckpoint, kOther };

// By content: /metrics (a run), /results (a benchmark), /trials (a search), /model (a
// checkpoint). An IoError names a path that is missing or not an HDF5 file.
ResultKind result_kind(const std::string& path);
std::string kind_name(ResultKind kind);  // "a run file", "a benchmark file", ...

// One split of a run's /metrics: its rows' steps, epochs and times, and each named series.
struct MetricSplit {
  std::vector<int64_t> step;
  std::vector<double> epoch, time;
  std::map<std::string, std::vector<double>> series;
  size_t rows() const { return step.size(); }
};

struct RunFile {
  std::string path;
  std::map<std::string, h5::Attribute> attributes;  // the root's: name, status, started_at, ...
  std::map<std::string, HParam> hparams;
  std::map<std::string, MetricSplit> metrics;  // by split: train, validation, data, ...
  std::map<std::string, int64_t> checkpoints;  // path -> step, those still kept
  std::string latest_checkpoint;
  std::string best_checkpoint;  // keep_best's (/checkpoints' attribute best), or empty
  std::string script_text;
  bool held = false;  // a process on this machine has it open for writing now

  // A root attribute as text ("" when absent).
  std::string text(const std::string& attribute) const;
  // The stored status, except that "running" on a file no process holds reads
  // "crashed or killed".
  std::string status() const;
};

// An IoError when the file is not a run file (it names the kind it is).
RunFile read_run_file(const std::string& path);

// One /metrics/<split> group read back, cut to the rows every series has (a file killed
// between two series' extensions can hold one row more in some).
MetricSplit read_metric_split(hid_t group);

}  // namespace engine::io
