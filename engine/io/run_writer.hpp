// Writes one run file (see HDF5_SCHEMA.md): run attributes, the script, hyperparameters and
// metric series, flushed after every appended row so a killed run leaves a readable file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "engine/io/hdf5.hpp"
#include "engine/io/hparam.hpp"

namespace engine::io {

struct RunInfo {
  std::string name;
  std::string command;  // the command line as typed
  std::string script_path;
  std::string script_text;
  std::string device = "cpu";
  int threads = 1;
  int world_size = 1;
  uint64_t seed = 0;
};

class RunWriter {
 public:
  // runs/<name>/<YYYYmmdd-HHMMSS>[-<n>].h5 under root; creates the folders. Never reuses a path.
  static std::string new_run_path(const std::string& root, const std::string& name);

  RunWriter(const std::string& path, const RunInfo& info);
  // Reopens a run file to continue it from a checkpoint: each split keeps its first
  // rows_kept[split] rows (the rows it had when the checkpoint was written; a split not named
  // keeps none), status goes back to running and the resume is recorded (resumed_at, resumes).
  RunWriter(const std::string& path, const std::map<std::string, int64_t>& rows_kept,
            const std::string& command);
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  void write_hparams(const std::map<std::string, HParam>& hparams);
  // One row of /metrics/<split>/...: the step, fractional epoch, time and named values.
  // A value missing from a row is stored as NaN; a name first seen late is back-filled with NaN.
  void append_metrics(const std::string& split, int64_t step, double epoch, double time,
                      const std::map<std::string, double>& values);
  // A checkpoint written for this run: /checkpoints gets an attribute for it, and latest.
  void record_checkpoint(const std::string& checkpoint_path, int64_t step);
  // A checkpoint deleted by the keep policy: its attribute goes.
  void forget_checkpoint(const std::string& checkpoint_path);
  // Why the run stopped ("finished 3 epochs", "early stopping: ...", "interrupted by SIGINT").
  void write_stop_reason(const std::string& reason);
  // status: completed | failed | interrupted. Sets finished_at; error is stored when non-empty.
  void finish(const std::string& status, const std::string& error = {});
  void flush();
  const std::string& path() const { return path_; }

 private:
  struct Split {
    h5::Handle group;
    h5::Handle step, epoch, time;
    std::map<std::string, h5::Handle> series;
    size_t rows = 0;
  };
  Split& split(const std::string& name);
  void open_existing_split(const std::string& name, int64_t rows_kept);

  std::string path_;
  h5::Handle file_;
  h5::Handle metrics_;
  std::map<std::string, Split> splits_;
};

// Hyperparameters as attributes of a group (a run file's /hparams, a checkpoint's), and back.
void write_hparams(hid_t group, const std::map<std::string, HParam>& hparams);
std::map<std::string, HParam> read_hparams(hid_t group);

// Local time as the schema writes it: 2026-11-22T10:31:05
std::string iso_timestamp();

}  // namespace engine::io
