#include "engine/cli/checkpoint_run.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "engine/cli/common.hpp"
#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/seed.hpp"

namespace engine::cli {

std::vector<std::string> hparam_assignments(const std::map<std::string, io::HParam>& hparams) {
  std::vector<std::string> out;
  for (const auto& [name, value] : hparams) {
    if (const auto* d = std::get_if<double>(&value)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", *d);
      out.push_back(name + "=" + buf);
    } else if (const auto* b = std::get_if<bool>(&value)) {
      out.push_back(name + "=" + (*b ? "true" : "false"));
    } else {
      out.push_back(name + "=" + std::get<std::string>(value));
    }
  }
  return out;
}

std::unique_ptr<CheckpointRun> open_checkpoint_run(const std::string& script_path,
                                                   const cxxopts::ParseResult& flags) {
  auto run = std::make_unique<CheckpointRun>();
  check_script(script_path);
  if (!flags.count("checkpoint")) {
    throw core::UsageError("--checkpoint is required: a checkpoint (ckpt-N.h5) or a run file");
  }
  run->threads = apply_common_flags(flags);
  const torch::Device device = core::parse_device(flags["device"].as<std::string>());
  run->checkpoint =
      train::resolve_checkpoint(flags["checkpoint"].as<std::string>(), "--checkpoint");
  run->info = train::read_checkpoint_info(run->checkpoint);
  run->session = make_session(script_path);
  run->script = run->session->train_script(script_path);
  run->script->apply_overrides(hparam_assignments(run->info.hparams));
  if (flags.count("set")) run->script->apply_overrides(flags["set"].as<std::vector<std::string>>());
  core::seed_everything(run->info.seed);
  run->spec = run->script->build(device, run->info.seed);
  train::load_model_weights(run->checkpoint, *run->spec.model.module);
  spdlog::info("model weights from {} (step {})", run->checkpoint, run->info.step);
  return run;
}

}  // namespace engine::cli
