// engine eval SCRIPT --checkpoint CKPT: the script's validation (or training) split through the
// checkpoint's model; metrics printed and written to runs/<name>/eval/<timestamp>.h5.
#include <spdlog/spdlog.h>

#include <cstdio>

#include "engine/cli/checkpoint_run.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/errors.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/train/trainer.hpp"

namespace engine::cli {

int eval_command(const std::vector<std::string>& args) {
  cxxopts::Options options("engine eval",
                           "Evaluate a checkpoint on the script's validation (or training) data.");
  options.positional_help("SCRIPT").show_positional_help();
  options.add_options()("script", "training script (.lua)", cxxopts::value<std::string>())(
      "checkpoint", "a checkpoint (ckpt-N.h5) or a run file (its latest checkpoint)",
      cxxopts::value<std::string>())("split", "validation or train",
                                     cxxopts::value<std::string>()->default_value("validation"));
  add_run_flags(options);
  options.parse_positional({"script"});
  auto flags = parse(options, args);
  if (flags.count("help")) {
    std::printf("%s\n", options.help({"", "run"}).c_str());
    return 0;
  }
  if (!flags.count("script"))
    throw core::UsageError("engine eval needs a script: engine eval SCRIPT.lua --checkpoint CKPT");
  const std::string split = flags["split"].as<std::string>();
  if (split != "validation" && split != "train") {
    throw core::UsageError("--split must be 'validation' or 'train', got '" + split + "'");
  }
  const std::string script_path = flags["script"].as<std::string>();
  auto run = open_checkpoint_run(script_path, flags);
  auto& spec = run->spec;
  const auto& pipeline = split == "train" ? spec.train_data : spec.validation_data;
  if (!pipeline) {
    throw core::UsageError("the script's data function returns no '" + split + "' pipeline");
  }
  spdlog::info("{} data: {}", split, pipeline->describe());

  io::RunInfo info;
  info.name = spec.name;
  info.command = "engine eval";
  for (const auto& a : args) info.command += " " + a;
  info.script_path = script_path;
  info.script_text = read_file(script_path);
  info.device = spec.device.str();
  info.threads = run->threads;
  info.seed = run->info.seed;
  io::RunWriter writer(
      io::RunWriter::new_run_path(flags["out"].as<std::string>(), spec.name + "/eval"), info);
  writer.write_hparams(run->script->hparams());
  try {
    train::Trainer trainer(spec, {});
    core::Timer clock;
    const auto metrics = trainer.evaluate(*pipeline, nullptr);
    writer.append_metrics(split, run->info.step, 0, clock.seconds(), metrics);
    writer.write_stop_reason("evaluated " + run->checkpoint);
    writer.finish("completed");
    std::printf("%s of %s (step %lld):\n", split.c_str(), run->checkpoint.c_str(),
                static_cast<long long>(run->info.step));
    for (const auto& [name, value] : metrics) std::printf("  %-20s %.6g\n", name.c_str(), value);
  } catch (const std::exception& e) {
    writer.finish("failed", core::describe_exception(e));
    throw;
  }
  std::printf("run file: %s\n", writer.path().c_str());
  return 0;
}

}  // namespace engine::cli
