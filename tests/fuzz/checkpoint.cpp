// Checkpoints: a real one (Adam, a step scheduler, metrics, every generator's state) with its
// groups, datasets and attributes removed, retyped, reshaped or refilled, then read as
// engine train --resume, engine eval and engine predict read them.
#include <filesystem>

#include "engine/train/checkpoint.hpp"
#include "engine/train/trainer.hpp"
#include "tests/fuzz/hdf5_mutator.hpp"
#include "tests/train/blob_spec.hpp"

namespace {

engine::train::TrainSpec spec_for(const std::string& folder) {
  auto spec = engine::test::blob_spec(3, 0.2, true, 64);
  spec.options.epochs = 1;
  spec.options.log_every = 2;
  spec.options.checkpoint.folder = folder;
  spec.options.checkpoint.every_epoch = true;
  spec.options.checkpoint.keep_last = 1;
  return spec;
}

// Trained once per process: the checkpoint every input starts from.
const std::string& base_checkpoint() {
  static const std::string path = [] {
    const auto folder = engine::fuzz::scratch_dir() + "/base";
    auto spec = spec_for(folder);
    engine::train::Trainer(spec, {}).run();
    for (const auto& entry : std::filesystem::directory_iterator(folder))
      if (entry.path().extension() == ".h5") return entry.path().string();
    throw std::runtime_error("the base checkpoint was not written");
  }();
  return path;
}

}  // namespace

ENGINE_FUZZ_TARGET(checkpoint) {
  engine::fuzz::Bytes in(data, size);
  const auto path = engine::fuzz::scratch_dir() + "/ckpt-fuzz.h5";
  engine::fuzz::mutate_hdf5(base_checkpoint(), path, in);
  switch (in.in_range(0, 3)) {
    case 0:
      (void)engine::train::read_checkpoint_info(path);
      break;
    case 1: {
      auto spec = spec_for("");
      engine::train::load_model_weights(path, *spec.model.module);
      break;
    }
    case 2:
      (void)engine::train::resolve_checkpoint(path, "--resume");
      break;
    default: {
      auto spec = spec_for("");
      (void)engine::train::load_checkpoint(path, spec);
    }
  }
}
