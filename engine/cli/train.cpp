// engine train SCRIPT: runs a training script and records it in a run file.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/cli/console.hpp"
#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/seed.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/lua/spec_reader.hpp"
#include "engine/nn/describe.hpp"
#include "engine/train/trainer.hpp"

namespace engine::cli {
namespace {

// Streams the trainer's metric rows into the run file.
class RunFileObserver : public train::Observer {
 public:
  explicit RunFileObserver(io::RunWriter& writer) : writer_(writer) {}
  void on_metrics(const train::MetricRow& row) override {
    writer_.append_metrics(row.split, row.step, row.epoch, row.time, row.values);
  }

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

}  // namespace

int train_command(const std::vector<std::string>& args) {
  cxxopts::Options options("engine train",
                           "Train the model a script declares; results go to an HDF5 run file.");
  options.positional_help("SCRIPT").show_positional_help();
  options.add_options()("script", "training script (.lua)", cxxopts::value<std::string>());
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

  auto runtime = make_runtime(script_path);
  lua::TrainScript script(*runtime, script_path);
  if (flags.count("set")) script.apply_overrides(flags["set"].as<std::vector<std::string>>());
  const uint64_t seed =
      flags.count("seed") ? flags["seed"].as<uint64_t>() : script.seed().value_or(fresh_seed());
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
  io::RunWriter writer(io::RunWriter::new_run_path(flags["out"].as<std::string>(), spec.name),
                       info);
  writer.write_hparams(script.hparams());
  spdlog::info("training '{}' on {} with {} threads, seed {}", spec.name, device.str(), threads,
               seed);

  ConsoleObserver console(quiet);
  RunFileObserver recorder(writer);
  train::TrainResult result;
  try {
    train::Trainer trainer(spec, {&console, &recorder});
    result = trainer.run();
  } catch (const std::exception& e) {
    writer.finish("failed", core::describe_exception(e));
    std::printf("\n");
    std::fprintf(stderr, "run file (failed): %s\n", writer.path().c_str());
    throw;
  }
  writer.finish("completed");
  if (!quiet) {
    std::string last;
    char buf[64];
    for (const auto& [name, value] : result.last_validation) {
      std::snprintf(buf, sizeof buf, " %s %.4f", name.c_str(), value);
      last += buf;
    }
    std::printf("finished %lld steps in %s%s%s\n", static_cast<long long>(result.steps),
                core::duration_string(result.seconds).c_str(), last.empty() ? "" : "; validation",
                last.c_str());
  }
  std::printf("run file: %s\n", writer.path().c_str());
  return 0;
}

}  // namespace engine::cli
