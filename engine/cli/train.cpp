// engine train SCRIPT: runs a training script and records it in a run file; --resume continues
// a run from its latest checkpoint (or a given one).

#include <cstdio>
#include <filesystem>
#include <functional>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/cli/console.hpp"
#include "engine/cli/distributed.hpp"
#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/core/log.hpp"
#include "engine/core/numbers.hpp"
#include "engine/core/statuses.hpp"
#include "engine/distributed/group.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/nn/describe.hpp"
#include "engine/train/run_length.hpp"
#include "engine/train/trainer.hpp"

namespace engine::cli {
namespace {

namespace fs = std::filesystem;

// Streams the trainer's metric rows and checkpoints into the run file, once it is open (the
// trainer is made and its checkpoint checked before the run file is touched).
class RunFileObserver : public train::Observer {
 public:
  void attach(io::RunWriter& writer) { writer_ = &writer; }
  void on_metrics(const train::MetricRow& row) override {
    writer().append_metrics(row.split, row.step, row.epoch, row.time, row.values);
  }
  void on_progress(const train::Progress&) override { writer().flush_if_due(); }
  void before_checkpoint(int64_t) override { writer().flush(); }
  void on_checkpoint(const std::string& path, int64_t step) override {
    writer().record_checkpoint(path, step);
  }
  void on_best_checkpoint(const std::string& path) override {
    writer().record_best_checkpoint(path);
  }
  void on_checkpoint_removed(const std::string& path) override { writer().forget_checkpoint(path); }

 private:
  io::RunWriter& writer() {
    if (!writer_) throw std::logic_error("the run file is not open yet");
    return *writer_;
  }
  io::RunWriter* writer_ = nullptr;
};

// The command that resumes this run exactly: the checkpoint holds the hyperparameters (--set
// included) and the seed; the thread count, the device and the GPU backends' settings given
// are what else a bit-identical continuation needs.
std::string resume_command(const run::RunRequest& request, const std::string& run_file) {
  const int threads = request.resume_threads > 0 ? request.resume_threads : request.threads;
  std::string command = "engine train " + shell_word(request.script) + " --resume " +
                        shell_word(run_file) + " --threads " + std::to_string(threads);
  if (request.device != "cpu") command += " --device " + shell_word(request.device);
  if (!request.device_settings.cudnn_benchmark) command += " --cudnn_benchmark false";
  if (request.device_settings.tf32) {
    command += std::string(" --tf32 ") + (*request.device_settings.tf32 ? "true" : "false");
  }
  return command + request.resume_launch;
}

// runs/<name>/<run>.h5 -> runs/<name>/<run>/
std::string checkpoint_folder(const std::string& run_file) {
  const fs::path p(run_file);
  return (p.parent_path() / p.stem()).string();
}

// A rank other than 0: trains its share with no observers and no run file; its errors reach
// main() (and its launcher's terminal, prefixed with its rank).
int follow(run::RunContext& context, distributed::Group* group) {
  core::InterruptScope interrupts(nullptr);  // rank 0 tells the user, and saves
  try {
    train::Trainer trainer(context.spec(), {}, {}, group);
    if (context.has_checkpoint()) {
      context.about_checkpoint([&] { trainer.resume_from(context.checkpoint()); });
      if (trainer.finished()) return 0;  // rank 0 says so; every rank has the same state
    }
    trainer.run();
  } catch (const core::Interrupted& e) {  // rank 0 says it, with the checkpoint to resume from
    return e.exit_code();
  }
  return 0;
}

cxxopts::Options train_options() {
  cxxopts::Options options("engine train",
                           "Train the model a script declares; results go to an HDF5 run file.");
  options.add_options()(
      "resume",
      "continue a run from its latest checkpoint: a run file (.h5) or a checkpoint (ckpt-N.h5), or "
      "one of the run's by name (RUN.h5:best, RUN.h5:STEP); "
      "auto: the newest run of this job under --out (this script, its hyperparameters after "
      "--set, its seed and --run_name; a completed one is left as it is), or a new one where "
      "there is none to go on with",
      cxxopts::value<std::string>())(
      "epochs",
      "train this many epochs, whatever the script's trainer says (a resumed run goes on to it)",
      cxxopts::value<int64_t>())(
      "steps", "train this many optimizer steps in all, whatever the script's trainer says",
      cxxopts::value<int64_t>())(
      "budget",
      "the length the whole run is planned for, in the unit of --epochs or --steps, when those "
      "train a stage of it (engine search's rungs): the script's hp.budget, with the stage's "
      "length as hp.rung; default: --epochs or --steps",
      cxxopts::value<int64_t>())(
      "run_name",
      "the job's own name (a scheduler's job id, $SLURM_JOB_ID): recorded in the run file; "
      "--resume auto goes on only with a run of the same name",
      cxxopts::value<std::string>());
  add_distributed_flags(options);
  return options;
}

run::RunRequest train_request(const cxxopts::ParseResult& flags,
                              const std::vector<std::string>& args) {
  auto request = run_request("engine train", flags, args);
  // --resume: the checkpoint decides the hyperparameters, the seed and the run file
  if (flags.count("run_name")) request.run_name = flags["run_name"].as<std::string>();
  if (flags.count("resume")) {
    request.checkpoint = flags["resume"].as<std::string>();
    request.runs_root = flags["out"].as<std::string>();
    request.checkpoint_flag = "--resume";
  }
  // a run length: from 1 to the most a run counts (a longer one would wrap around to none)
  auto run_length = [&](const std::string& flag, std::optional<int64_t>& into) {
    if (!flags.count(flag)) return;
    const int64_t value = flags[flag].as<int64_t>();
    if (value < 1) throw core::UsageError("--" + flag + " must be >= 1");
    if (value > core::kMaxCount) {
      throw core::UsageError("--" + flag + " " + std::to_string(value) + ": at most 2^53 (" +
                             std::to_string(core::kMaxCount) + "), the most a run counts");
    }
    into = value;
  };
  run_length("epochs", request.epochs);
  run_length("steps", request.steps);
  run_length("budget", request.budget);
  if (request.budget) {
    const auto length = request.steps ? request.steps : request.epochs;
    if (!length) {
      throw core::UsageError(
          "--budget is the whole length that --epochs or --steps trains a "
          "stage of: give one of them too");
    }
    if (*request.budget < *length) {
      throw core::UsageError("--budget " + std::to_string(*request.budget) +
                             " is shorter than the stage it plans for (--" +
                             (request.steps ? "steps " : "epochs ") + std::to_string(*length) +
                             ")");
    }
  }
  return request;
}

std::unique_ptr<distributed::Group> join_group(const distributed::World& world,
                                               run::RunRequest& request, int requested_threads) {
  if (!world.distributed()) return nullptr;
  core::log::info("joining {} process{} ({}), {}", world.size, world.size == 1 ? "" : "es",
                  world.source, world.describe());
  auto group = std::make_unique<distributed::Group>(world, core::parse_device(request.device));
  // cuda: this machine's GPU LOCAL_RANK, which the group may have found only now
  request.device = group->device().str();
  request.threads = apply_threads(requested_threads, group->world());
  // a launcher's workers each took their share of its --threads: the hint gives the whole
  if (world.launched) request.resume_threads = request.threads * group->world().local_size;
  return group;
}

void describe_run(run::RunContext& context) {
  const auto& spec = context.spec();
  if (!spec.train_data) {
    throw core::ScriptError(context.request().script +
                            ": data() returned no train split; engine train needs "
                            "{train = ..., validation = ...} (validation is optional)");
  }
  core::log::info("model: {} parameters", nn::count_parameters(*spec.model.module));
  core::log::info("train data: {}", spec.train_data->describe());
  if (spec.validation_data)
    core::log::info("validation data: {}", spec.validation_data->describe());
  core::log::debug("model:\n{}", nn::describe_tree(*spec.model.module));
}

using TrainerFactory = std::function<std::unique_ptr<train::Trainer>()>;

// Trains into the open run file; an interrupt or a failure is written there (status, stop
// reason) with what to do next, and thrown on.
train::TrainResult train_recorded(run::RunContext& context, distributed::Group* group,
                                  std::unique_ptr<train::Trainer>& trainer,
                                  const TrainerFactory& make_trainer, ConsoleObserver& console,
                                  io::RunWriter& writer) {
  const auto& spec = context.spec();
  core::InterruptScope interrupts(core::kTrainingInterruptMessage);
  try {
    if (!trainer) trainer = make_trainer();  // a fresh run's errors go into its run file
    if (context.has_checkpoint()) {
      core::log::info("resuming '{}' from {} at step {} (epoch {})", spec.name,
                      context.checkpoint(), trainer->state().step, trainer->state().epoch + 1);
    } else if (group) {
      core::log::info("training '{}' on {} process{} x {} threads ({}), seed {}", spec.name,
                      group->size(), group->size() == 1 ? "" : "es", context.request().threads,
                      spec.device.str(), context.seed());
    } else {
      core::log::info("training '{}' on {} with {} threads, seed {}", spec.name, spec.device.str(),
                      context.request().threads, context.seed());
    }
    return trainer->run();
  } catch (const core::Interrupted& e) {
    console.finish_line();
    writer.write_stop_reason(e.what());
    writer.finish(core::FileStatus::kInterrupted);
    std::fprintf(stderr, "run file (interrupted): %s\nresume with: %s\n", writer.path().c_str(),
                 resume_command(context.request(), writer.path()).c_str());
    throw;
  } catch (const std::exception& e) {
    console.finish_line();
    const std::string message = core::describe_exception(e);
    writer.write_stop_reason("failed: " + message);
    writer.finish(core::FileStatus::kFailed, message);
    std::fprintf(stderr, "run file (failed): %s\nshow it: engine report %s\n",
                 writer.path().c_str(), writer.path().c_str());
    throw;
  }
}

// Rank 0, or the only process: trains with the console and the run file watching.
int lead(run::RunContext& context, distributed::Group* group, const std::string& run_path,
         const std::string& out, bool quiet) {
  auto& spec = context.spec();
  ConsoleObserver console(quiet);
  RunFileObserver recorder;
  const TrainerFactory make_trainer = [&] {
    return std::make_unique<train::Trainer>(
        spec, std::vector<train::Observer*>{&console, &recorder}, run_path, group);
  };
  std::unique_ptr<train::Trainer> trainer;
  if (context.has_checkpoint()) {  // a failure here has changed no file
    trainer = make_trainer();
    context.about_checkpoint([&] { trainer->resume_from(context.checkpoint()); });
    if (trainer->finished()) {
      std::printf(
          "%s: already completed at step %lld, nothing to do (a longer run: --epochs or "
          "--steps); the run file is as it was: %s\n",
          spec.name.c_str(), static_cast<long long>(trainer->state().step), run_path.c_str());
      return 0;
    }
  }
  io::RunWriter& writer = context.open_run_file(out);
  recorder.attach(writer);
  const auto result = train_recorded(context, group, trainer, make_trainer, console, writer);
  writer.write_stop_reason(result.stop_reason);
  writer.finish(core::FileStatus::kCompleted);
  if (!quiet) console.print_result(result);
  std::printf("run file: %s\nshow it: engine report %s\n", writer.path().c_str(),
              writer.path().c_str());
  return 0;
}

}  // namespace

int train_command(const std::vector<std::string>& args) {
  auto options = train_options();
  const auto flags = parse_script_command(options, args, "a script: engine train SCRIPT.lua");
  if (!flags) return 0;
  if (auto code = launch_if_asked(*flags, "train", args, (*flags)["threads"].as<int>()))
    return *code;
  const distributed::World world = world_of(*flags);
  const bool leader = world.rank == 0;  // rank 0 prints and writes; the others stay quiet
  auto request = train_request(*flags, args);
  request.resume_launch = resume_launch(args, world);
  if (!leader && !flags->count("verbose")) core::log::set_level(core::log::Level::warn);
  const auto group = join_group(world, request, (*flags)["threads"].as<int>());
  run::RunContext context(std::move(request), run::CheckpointUse::kResume, group.get());
  describe_run(context);
  train::planned_steps(context.spec());  // a length beyond what a run counts: refused here

  // the run file's path is reserved and locked here; nothing is written to it until the
  // checkpoint has been loaded and checked into the model, optimizer, schedule and data position
  const std::string out = (*flags)["out"].as<std::string>();
  const std::string run_path = leader ? context.reserve_run_file(out) : "";
  if (leader) tell_launcher_run_file(run_path);
  auto& checkpoints = context.spec().options.checkpoint;
  if (checkpoints.keep_last > 0) {
    const std::string folder = leader ? checkpoint_folder(run_path) : "";
    checkpoints.folder = group ? group->share(folder) : folder;
  }
  if (!leader) return follow(context, group.get());
  return lead(context, group.get(), run_path, out, flags->count("quiet") > 0);
}

}  // namespace engine::cli
