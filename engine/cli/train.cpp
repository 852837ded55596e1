// engine train SCRIPT: runs a training script and records it in a run file; --resume continues
// a run from its latest checkpoint (or a given one).
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "engine/cli/checkpoint_run.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/cli/console.hpp"
#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/core/seed.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/nn/describe.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/trainer.hpp"

namespace engine::cli {
namespace {

namespace fs = std::filesystem;

// Streams the trainer's metric rows and checkpoints into the run file.
class RunFileObserver : public train::Observer {
 public:
  explicit RunFileObserver(io::RunWriter& writer) : writer_(writer) {}
  void on_metrics(const train::MetricRow& row) override {
    writer_.append_metrics(row.split, row.step, row.epoch, row.time, row.values);
  }
  void on_checkpoint(const std::string& path, int64_t step) override {
    writer_.record_checkpoint(path, step);
  }
  void on_checkpoint_removed(const std::string& path) override { writer_.forget_checkpoint(path); }

 private:
  io::RunWriter& writer_;
};

std::string command_line(const std::vector<std::string>& args) {
  std::string out = "engine train";
  for (const auto& a : args) out += " " + a;
  return out;
}

uint64_t fresh_seed() {
  return static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) %
         1000000007ULL;
}

// runs/<name>/<run>.h5 -> runs/<name>/<run>/
std::string checkpoint_folder(const std::string& run_file) {
  const fs::path p(run_file);
  return (p.parent_path() / p.stem()).string();
}

}  // namespace

int train_command(const std::vector<std::string>& args) {
  cxxopts::Options options("engine train",
                           "Train the model a script declares; results go to an HDF5 run file.");
  options.positional_help("SCRIPT").show_positional_help();
  options.add_options()("script", "training script (.lua)", cxxopts::value<std::string>())(
      "resume",
      "continue a run from its latest checkpoint: a run file (.h5) or a checkpoint (ckpt-N.h5)",
      cxxopts::value<std::string>());
  add_run_flags(options);
  options.parse_positional({"script"});
  auto flags = parse(options, args);
  if (flags.count("help")) {
    std::printf("%s\n", options.help({"", "run"}).c_str());
    return 0;
  }
  if (!flags.count("script"))
    throw core::UsageError("engine train needs a script: engine train SCRIPT.lua");
  const std::string script_path = flags["script"].as<std::string>();
  check_script(script_path);
  const int threads = apply_common_flags(flags);
  const bool quiet = flags.count("quiet") > 0;
  const torch::Device device = core::parse_device(flags["device"].as<std::string>());

  // --resume: the checkpoint decides the hyperparameters, the seed and the run file
  std::string checkpoint;
  train::CheckpointInfo resumed;
  if (flags.count("resume")) {
    checkpoint = train::resolve_checkpoint(flags["resume"].as<std::string>(), "--resume");
    resumed = train::read_checkpoint_info(checkpoint);
  }

  auto session = make_session(script_path);
  auto script_owner = session->train_script(script_path);
  lua::TrainScript& script = *script_owner;
  if (!checkpoint.empty()) script.apply_overrides(hparam_assignments(resumed.hparams));
  if (flags.count("set")) {
    if (!checkpoint.empty()) {
      spdlog::warn(
          "--set changes hyperparameters of a resumed run; its run file records the new "
          "values");
    }
    script.apply_overrides(flags["set"].as<std::vector<std::string>>());
  }
  uint64_t seed =
      flags.count("seed") ? flags["seed"].as<uint64_t>() : script.seed().value_or(fresh_seed());
  if (!checkpoint.empty()) {
    if (flags.count("seed") && seed != resumed.seed) {
      spdlog::warn("--seed {} ignored: the resumed run's seed is {}", seed, resumed.seed);
    }
    seed = resumed.seed;
  }
  core::seed_everything(seed);

  auto spec = script.build(device, seed);
  spdlog::info("model: {} parameters", nn::count_parameters(*spec.model.module));
  spdlog::info("train data: {}", spec.train_data->describe());
  if (spec.validation_data) spdlog::info("validation data: {}", spec.validation_data->describe());
  spdlog::debug("model:\n{}", nn::describe_tree(*spec.model.module));

  io::RunInfo info;
  info.name = spec.name;
  info.command = command_line(args);
  info.script_path = script_path;
  info.script_text = read_file(script_path);
  info.device = device.str();
  info.threads = threads;
  info.seed = seed;
  std::unique_ptr<io::RunWriter> writer;
  if (!checkpoint.empty() && fs::is_regular_file(resumed.run_file)) {
    try {
      writer = std::make_unique<io::RunWriter>(resumed.run_file, resumed.rows, info.command);
    } catch (const core::Error& e) {  // a file damaged by the crash: keep it, start another
      spdlog::warn("cannot continue the run file {} ({}); the resumed run gets a new one",
                   resumed.run_file, e.what());
    }
  } else if (!checkpoint.empty()) {
    spdlog::warn("the checkpoint's run file {} is missing; the resumed run gets a new one",
                 resumed.run_file);
  }
  if (!writer) {
    writer = std::make_unique<io::RunWriter>(
        io::RunWriter::new_run_path(flags["out"].as<std::string>(), spec.name), info);
  }
  writer->write_hparams(script.hparams());
  if (spec.options.checkpoint.keep_last > 0) {
    spec.options.checkpoint.folder = checkpoint_folder(writer->path());
  }

  ConsoleObserver console(quiet);
  RunFileObserver recorder(*writer);
  train::TrainResult result;
  core::install_interrupt_handlers();
  try {
    train::Trainer trainer(spec, {&console, &recorder}, writer->path());
    if (!checkpoint.empty()) {
      trainer.resume_from(checkpoint);
      spdlog::info("resuming '{}' from {} at step {} (epoch {})", spec.name, checkpoint,
                   trainer.state().step, trainer.state().epoch + 1);
    } else {
      spdlog::info("training '{}' on {} with {} threads, seed {}", spec.name, device.str(), threads,
                   seed);
    }
    result = trainer.run();
  } catch (const core::Interrupted& e) {
    core::reset_interrupt_handlers();
    console.finish_line();
    writer->write_stop_reason(e.what());
    writer->finish("interrupted");
    std::fprintf(stderr, "run file (interrupted): %s\nresume with: engine train %s --resume %s\n",
                 writer->path().c_str(), script_path.c_str(), writer->path().c_str());
    throw;
  } catch (const std::exception& e) {
    core::reset_interrupt_handlers();
    console.finish_line();
    const std::string message = core::describe_exception(e);
    writer->write_stop_reason("failed: " + message);
    writer->finish("failed", message);
    std::fprintf(stderr, "run file (failed): %s\n", writer->path().c_str());
    throw;
  }
  core::reset_interrupt_handlers();
  writer->write_stop_reason(result.stop_reason);
  writer->finish("completed");
  if (!quiet) console.print_result(result);
  std::printf("run file: %s\n", writer->path().c_str());
  return 0;
}

}  // namespace engine::cli
