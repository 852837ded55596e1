// Writes one run file (see HDF5_SCHEMA.md): run attributes, the script, hyperparameters and
// metric series. Rows wait in memory and reach the file together, at a bounded interval and at
// every checkpoint, so that the file changes only inside short flushes and a run killed at any
// moment leaves a file that opens, holding every row up to its last flush (docs/results.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "engine/core/disk_room.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/hdf5.hpp"
#include "engine/io/hparam.hpp"

namespace engine::io {

struct RunInfo {
  std::string name;
  std::string description;  // the script's, written as a root attribute when not empty
  std::string command;      // the command line as typed
  std::string script_path;
  std::string script_text;
  std::string device = "cpu";
  int threads = 1;
  int world_size = 1;
  uint64_t seed = 0;
  std::string run_name;  // --run_name: the job's own name (written when not empty)
  // A script's own metrics that declared a direction: true when larger is better. Written as
  // the root attributes maximized_metrics and minimized_metrics (names joined by commas).
  std::map<std::string, bool> metric_directions;
  // Settings of libtorch's GPU backends in force (cudnn_benchmark, tf32_matmul, tf32_cudnn) and
  // of the step (memory_format, cuda_graphs), and
  // facts about the machine's native parts (the GPU and its libraries, the OpenMP runtime),
  // each written as a root attribute of its name.
  std::vector<std::pair<std::string, h5::Attribute>> device_settings;
  std::vector<std::pair<std::string, std::string>> machine_facts;
};

// When waiting rows are written and flushed: as soon as `rows` wait, or when a row arrives (or
// flush_if_due() is called) `seconds` after the last flush.
struct FlushPolicy {
  size_t rows = 1000;
  double seconds = 2.0;
};

// Creates `path` empty unless something exists there (false), atomically: a name taken for a
// result file, which h5::create_file then takes over. An IoError when it cannot be created.
bool reserve_new_file(const std::string& path);

// What one stretch of a run (its start, or a resume) was trained with: what exactness needs.
// (Outside RunWriter: a nested struct with member initializers cannot be a default argument of
// its enclosing class's constructor.)
// The run file's format (HDF5_SCHEMA.md), written as format_version and checked on reading.
inline constexpr int64_t kRunFormatVersion = 1;

struct RunSegment {
  int64_t threads = 0;  // 0: not known (a file from before segments were recorded)
  std::string device;
  int64_t step = 0;  // the step it began at
};

class RunWriter {
 public:
  // runs/<name>/<YYYYmmdd-HHMMSS>[-<n>].h5 under root; creates the folders. Never reuses a path.
  static std::string new_run_path(const std::string& root, const std::string& name);

  RunWriter(const std::string& path, const RunInfo& info);
  using Segment = RunSegment;
  // The latest segment of a run file: its last resume's, else the run's own start.
  static Segment latest_segment(const std::string& path);
  // Reads (never writes) the run file a checkpoint would continue: DataError or IoError when it
  // is damaged, or has fewer rows in a split than the checkpoint expects.
  static void check_continuable(const std::string& path,
                                const std::map<std::string, int64_t>& rows_kept);
  // Reopens a run file to continue it from a checkpoint: each split keeps its first
  // rows_kept[split] rows (the rows it had when the checkpoint was written; a split not named
  // keeps none), status goes back to running and the resume is recorded (resumed_at, resumes;
  // the segment as resume_<N>_threads, resume_<N>_device and resume_<N>_step, N = resumes,
  // when segment.threads is known). Changed in a copy that replaces the file once done.
  RunWriter(const std::string& path, const std::map<std::string, int64_t>& rows_kept,
            const std::string& command, const Segment& segment = {});
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
  // /checkpoints' attribute best: the checkpoint keep_best keeps (RUN.h5:best)
  void record_best_checkpoint(const std::string& checkpoint_path);
  // A checkpoint deleted by the keep policy: its attribute goes.
  void forget_checkpoint(const std::string& checkpoint_path);
  // Why the run stopped ("finished 3 epochs", "early stopping: ...", "interrupted by SIGINT").
  void write_stop_reason(const std::string& reason);
  // engine eval's file: what it evaluated, the checkpoint and the run that wrote it (root
  // attributes checkpoint, checkpoint_step, evaluated_run), for the evaluations table
  void write_evaluated(const std::string& checkpoint, int64_t step, const std::string& run_file);
  // status: completed | failed | interrupted. Sets finished_at; error is stored when non-empty.
  void finish(core::FileStatus status, const std::string& error = {});
  // Writes the waiting rows and flushes the file now. Disk room for the flush is taken first
  // (core::DiskRoom): when there is none, an IoError with the system's reason, the file holding
  // every row of the flushes before; the writer's last flushes (finish) then use what is left.
  void flush();
  // flush() when the policy's time has passed since the last one and rows wait (cheap: a clock
  // reading), for callers that tick more often than rows arrive.
  void flush_if_due();
  void set_flush_policy(const FlushPolicy& policy) { policy_ = policy; }
  size_t waiting_rows() const { return waiting_; }
  const std::string& path() const { return path_; }

 private:
  struct Split {
    h5::Handle group;
    h5::Handle step, epoch, time;
    std::map<std::string, h5::Handle> series;
    size_t rows = 0;
  };
  struct Row {
    int64_t step;
    double epoch, time;
    std::map<std::string, double> values;
  };
  Split& split(const std::string& name);
  void continue_in_copy(const std::map<std::string, int64_t>& rows_kept, const std::string& command,
                        const Segment& segment);
  void open_existing_split(const std::string& name, int64_t rows_kept);
  void write_waiting_rows();
  // Throws an IoError once when the path no longer names the file this writer writes (deleted or
  // replaced during the run): the rows written from then on would be lost.
  void check_still_there();

  // flush() without renewing the room: a run's last writes (why it stopped, its status), which
  // must reach the file when the room could not be renewed, go in what is left of it.
  void write_out();

  std::string path_;
  uint64_t device_ = 0, inode_ = 0;  // the file's identity when it was opened
  bool gone_ = false;
  core::DiskRoom room_;  // before file_: given back once the file is closed
  h5::Handle file_;
  h5::Handle metrics_;
  std::map<std::string, Split> splits_;
  std::map<std::string, std::vector<Row>> waiting_rows_;  // by split
  size_t waiting_ = 0;
  FlushPolicy policy_;
  std::chrono::steady_clock::time_point last_flush_ = std::chrono::steady_clock::now();
};

// Hyperparameters as attributes of a group (a run file's /hparams, a checkpoint's), and back.
void write_hparams(hid_t group, const std::map<std::string, HParam>& hparams);
std::map<std::string, HParam> read_hparams(hid_t group);

// Local time as the schema writes it: 2026-11-22T10:31:05
std::string iso_timestamp();

// The attributes every result file's root starts with: format_version, engine_version,
// torch_version, name, command, script, started_at and status (running).
void write_origin(hid_t root, int64_t format_version, const std::string& name,
                  const std::string& command, const std::string& script_path);

}  // namespace engine::io
