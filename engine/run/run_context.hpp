// What every command that runs a training script sets up, made once and the same way for
// engine train (fresh or --resume), eval and predict: the script read in its own Lua session,
// a checkpoint resolved and its hyperparameters applied as typed values (then --set), the seed
// decided and applied, the spec built on the device, the checkpoint's weights loaded (or left
// for the trainer to resume from), and one run file. Errors about the checkpoint name the flag
// the user gave (--resume, --checkpoint).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/device_settings.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/run_lock.hpp"
#include "engine/distributed/group.hpp"
#include "engine/distributed/shared_file.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/lua/session.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/spec.hpp"

namespace engine::run {

struct RunRequest {
  std::string script;                    // path of the training script (.lua)
  lua::RuntimeOptions lua;               // its session's require path and dataset folders
  std::string command;                   // the command line as typed, for the run file
  std::string device = "cpu";            // --device
  core::DeviceSettings device_settings;  // --cudnn_benchmark, --tf32
  int threads = 1;                       // libtorch threads in use, for the run file
  std::optional<uint64_t> seed;          // --seed
  std::string run_name;                  // --run_name: the job's own name, in its run file
  std::vector<std::string> overrides;    // --set key=value, applied after a checkpoint's values
  std::string checkpoint;                // a checkpoint or a run file (its latest); empty: none
                                         // "auto" with --resume: see RunContext
  std::string runs_root = "runs";        // --out: where --resume auto looks for the script's runs
  std::string checkpoint_flag = "--checkpoint";  // the flag checkpoint came from
  // --epochs / --steps: the run's length instead of the script's trainer (a resumed run goes
  // on to it; engine search trains trials rung by rung this way)
  std::optional<int64_t> epochs, steps;
  // --budget: the length the whole run is planned for (hp.budget), in the unit of --epochs or
  // --steps, when those train a stage of it (a search trial's rung: hp.rung)
  std::optional<int64_t> budget;
  // What the resume hint adds to start the same world again (cli::resume_launch), and the
  // --threads it gives: a launcher's, which divides them among its workers (0: `threads`).
  std::string resume_launch;
  int resume_threads = 0;
};

// What the checkpoint is for: the trainer's whole state (engine train --resume), or the
// model's weights (engine eval, engine predict).
enum class CheckpointUse { kResume, kWeights };

class RunContext {
 public:
  // group: the processes of a distributed run, which take rank 0's seed (chosen by it when
  // neither --seed nor the script gives one) so that they shuffle the data alike.
  RunContext(RunRequest request, CheckpointUse use, distributed::Group* group = nullptr);
  ~RunContext();
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;

  const RunRequest& request() const { return request_; }
  train::TrainSpec& spec() { return spec_; }
  lua::TrainScript& script() { return *script_; }
  uint64_t seed() const { return seed_; }
  bool has_checkpoint() const { return !checkpoint_.empty(); }
  const std::string& checkpoint() const { return checkpoint_; }  // resolved: a ckpt-N.h5
  const train::CheckpointInfo& checkpoint_info() const { return info_; }
  // "--resume runs/mnist/a.h5": where the checkpoint came from, as errors name it.
  std::string checkpoint_origin() const;

  // Runs fn; a DataError or IoError from reading the checkpoint comes out naming its flag.
  template <typename Fn>
  auto about_checkpoint(Fn&& fn) const -> decltype(fn());

  // The run file's path, decided once and locked for this process (core::RunLock; a run another
  // live process holds is a UsageError naming it): a resumed training run continues the run
  // file the path the user gave belongs to, found by location (the run file given, or the one
  // beside a checkpoint's folder: runs/<name>/<run>.h5 for runs/<name>/<run>/ckpt-N.h5), never
  // the path recorded in the checkpoint; otherwise (none there) a new one,
  // root/<name><suffix>/<time>.h5. Nothing is written to an existing run file here.
  const std::string& reserve_run_file(const std::string& root, const std::string& suffix = "");
  // The run file reserved above (reserving it first if not yet), opened: a resumed run's is cut
  // back to the checkpoint's rows in a copy put in its place (crash-safe), or, when it is
  // damaged, left as it is and a new one started. The hyperparameters in use are written to it.
  io::RunWriter& open_run_file(const std::string& root, const std::string& suffix = "");
  io::RunWriter& run_file();

 private:
  io::RunInfo run_info() const;
  // Resolves the checkpoint asked for and reads what it holds (checkpoint_, info_, the run file
  // it belongs to).
  void open_checkpoint(distributed::Group* group);
  // The spec built from the script, with --epochs / --steps (also the script's hp.budget).
  void build_spec(torch::Device device);
  // Warns when a resumed run goes on with another thread count or device than its last stretch.
  void warn_if_not_exact(const io::RunWriter::Segment& before) const;
  [[noreturn]] void rethrow_about_checkpoint(const std::exception& e) const;

  RunRequest request_;
  CheckpointUse use_;
  std::string checkpoint_;  // where this process reads it: rank 0's path, or a copy of it
  distributed::LocalCopy local_checkpoint_;  // rank 0's checkpoint, when this machine lacks it
  train::CheckpointInfo info_;
  uint64_t seed_ = 0;
  std::unique_ptr<lua::Session> session_;     // outlives the script
  std::unique_ptr<lua::TrainScript> script_;  // outlives the spec, whose hooks call into it
  train::TrainSpec spec_;
  std::string run_file_by_location_;  // a resumed run's own run file, where it should be
  std::string run_path_;              // reserved: continued (continuing_) or new
  bool continuing_ = false;
  std::unique_ptr<core::RunLock> lock_;
  std::unique_ptr<io::RunWriter> run_file_;
  int world_size_ = 1;
};

template <typename Fn>
auto RunContext::about_checkpoint(Fn&& fn) const -> decltype(fn()) {
  try {
    return fn();
  } catch (const core::DataError& e) {
    rethrow_about_checkpoint(e);
  } catch (const core::IoError& e) {
    rethrow_about_checkpoint(e);
  }
}

}  // namespace engine::run
