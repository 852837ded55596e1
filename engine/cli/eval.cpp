// engine eval SCRIPT --checkpoint CKPT: the script's validation (or test, or training) split
// through the checkpoint's model; metrics printed and written to runs/<name>/eval/<timestamp>.h5.

#include <cstdio>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/activity.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/log.hpp"
#include "engine/core/statuses.hpp"
#include "engine/core/timer.hpp"
#include "engine/train/evaluator.hpp"

namespace engine::cli {

int eval_command(const std::vector<std::string>& args) {
  cxxopts::Options options(
      "engine eval",
      "Evaluate a checkpoint on the script's validation (or test, or training) data.");
  options.add_options()("checkpoint", kCheckpointHelp, cxxopts::value<std::string>())(
      "split", "validation, test or train",
      cxxopts::value<std::string>()->default_value("validation"));
  const auto flags = parse_script_command(
      options, args, "a script and a checkpoint: engine eval SCRIPT.lua --checkpoint CKPT");
  if (!flags) return 0;
  const std::string split = (*flags)["split"].as<std::string>();
  if (split != "validation" && split != "train" && split != "test") {
    throw core::UsageError("--split must be 'validation', 'test' or 'train', got '" + split + "'");
  }
  run::RunContext context(checkpoint_request("engine eval", *flags, args),
                          run::CheckpointUse::kWeights);
  auto& spec = context.spec();
  const auto& pipeline = split == "train"  ? spec.train_data
                         : split == "test" ? spec.test_data
                                           : spec.validation_data;
  if (!pipeline) {
    throw core::UsageError("the script's data function returns no '" + split + "' pipeline");
  }
  core::log::info("{} data: {}", split, pipeline->describe());

  auto& writer = context.open_run_file((*flags)["out"].as<std::string>(), "/eval");
  const int64_t step = context.checkpoint_info().step;
  try {
    train::Evaluator evaluator(spec);
    evaluator.set_position(1, step);
    core::Timer clock;
    const auto metrics = [&] {
      core::Activity activity("the evaluation of the checkpoint");
      return evaluator.run(*pipeline);
    }();
    writer.append_metrics(split, step, 0, clock.seconds(), metrics);
    writer.write_evaluated(context.checkpoint(), step, context.checkpoint_info().run_file);
    writer.write_stop_reason("evaluated " + context.checkpoint());
    writer.finish(core::FileStatus::kCompleted);
    std::printf("%s of %s (step %lld):\n", split.c_str(), context.checkpoint().c_str(),
                static_cast<long long>(step));
    for (const auto& [name, value] : metrics) std::printf("  %-20s %.6g\n", name.c_str(), value);
  } catch (const std::exception& e) {
    writer.finish(core::FileStatus::kFailed, core::describe_exception(e));
    throw;
  }
  std::printf("run file: %s\n", writer.path().c_str());
  return 0;
}

}  // namespace engine::cli
