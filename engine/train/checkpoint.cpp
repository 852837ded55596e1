#include "engine/train/checkpoint.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/serialize/archive.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>

#include "engine/core/damaged_file_guard.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/log.hpp"
#include "engine/core/numbers.hpp"
#include "engine/core/version.hpp"
#include "engine/io/hdf5.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/io/tensor_archive.hpp"
#include "engine/train/checkpoint_by_name.hpp"
#include "engine/train/checkpoint_parts.hpp"

namespace engine::train {

std::map<std::string, double> read_double_attributes(hid_t object) {
  std::map<std::string, double> out;
  for (const auto& [name, value] : io::read_hparams(object)) {
    if (const auto* d = std::get_if<double>(&value)) out[name] = *d;
  }
  return out;
}

namespace {

namespace fs = std::filesystem;
namespace h5 = io::h5;

constexpr int64_t kCheckpointFormat = 1;

std::string shape_text(const torch::Tensor& t) {
  std::string out;
  for (auto d : t.sizes()) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out.empty() ? "scalar" : out;
}

// Every tensor of the model under its PyTorch state_dict name.
std::vector<std::pair<std::string, torch::Tensor>> state_tensors(torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : module.named_parameters(true)) out.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers(true)) out.emplace_back(b.key(), b.value());
  return out;
}

// A tensor held under two names (a tied weight: PyTorch's state_dict keeps both keys) is
// written once, its second name a link to the first.
void write_model(hid_t file, torch::nn::Module& module) {
  auto group = h5::create_group(file, "model");
  std::map<const void*, std::string> written;
  for (const auto& [name, tensor] : state_tensors(module)) {
    const auto [first, fresh] = written.emplace(tensor.unsafeGetTensorImpl(), name);
    if (fresh) {
      io::write_tensor(group.get(), name, tensor);
    } else {
      h5::link(group.get(), first->second, name);
    }
  }
}

// Loads the model's tensors, or none: a checkpoint of another model is refused with every
// tensor that does not fit, by name and shape (the first ten of them).
void read_model(hid_t file, const std::string& path, torch::nn::Module& module) {
  if (!h5::exists(file, "model")) throw core::DataError(path + ": not a checkpoint (no /model)");
  auto group = h5::open_group(file, "model");
  auto tensors = state_tensors(module);
  std::set<std::string> expected;
  for (const auto& [name, tensor] : tensors) expected.insert(name);
  std::vector<std::string> misfits;
  for (const auto& name : io::members(group.get())) {
    if (!expected.count(name)) {
      misfits.push_back("/model/" + name + ": " + shape_text(io::read_tensor(group.get(), name)) +
                        " in the checkpoint, not in this script's model");
    }
  }
  std::vector<torch::Tensor> saved(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, tensor] = tensors[i];
    if (!h5::exists(group.get(), name)) {
      misfits.push_back("/model/" + name + ": " + shape_text(tensor) +
                        " in this script's model, not in the checkpoint");
      continue;
    }
    saved[i] = io::read_tensor(group.get(), name);
    if (saved[i].sizes() != tensor.sizes()) {
      misfits.push_back("/model/" + name + ": " + shape_text(saved[i]) + " in the checkpoint, " +
                        shape_text(tensor) + " in this script's model");
    }
  }
  if (!misfits.empty()) {
    std::string text = path + ": the checkpoint was written for a different model; " +
                       std::to_string(misfits.size()) + " tensor" +
                       (misfits.size() == 1 ? " does" : "s do") + " not fit:";
    constexpr size_t kListed = 10;
    for (size_t i = 0; i < std::min(misfits.size(), kListed); ++i) text += "\n  " + misfits[i];
    if (misfits.size() > kListed)
      text += "\n  (and " + std::to_string(misfits.size() - kListed) + " more)";
    throw core::DataError(text);
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < tensors.size(); ++i) tensors[i].second.copy_(saved[i]);
}

// The run file's rows per split at the checkpoint: whole numbers, 0 or more.
std::map<std::string, int64_t> read_row_counts(hid_t group) {
  std::map<std::string, int64_t> out;
  for (const auto& [split, n] : read_double_attributes(group)) {
    const auto rows = core::exact_int64(n);
    if (!rows || *rows < 0) {
      throw core::DataError("trainer/rows/" + split + " is " + core::number_string(n) +
                            ", not a count of rows");
    }
    out[split] = *rows;
  }
  return out;
}

void write_doubles(hid_t parent, const std::string& name, const std::map<std::string, double>& m) {
  auto group = h5::create_group(parent, name);
  for (const auto& [k, v] : m) h5::write_attribute(group.get(), k, v);
}

void write_accumulator(hid_t parent, const std::string& name, const MetricAccumulator& acc) {
  auto group = h5::create_group(parent, name);
  h5::write_attribute(group.get(), "samples", acc.samples());
  write_doubles(group.get(), "sums", acc.sums());
  if (acc.counts().defined()) io::write_tensor(group.get(), "class_counts", acc.counts());
}

void read_accumulator(hid_t parent, const std::string& name, MetricAccumulator& acc) {
  auto group = h5::open_group(parent, name);
  auto sums_group = h5::open_group(group.get(), "sums");
  torch::Tensor counts;
  if (h5::exists(group.get(), "class_counts"))
    counts = io::read_tensor(group.get(), "class_counts");
  acc.restore(read_double_attributes(sums_group.get()),
              h5::read_int_attribute(group.get(), "samples"), counts);
}

std::string join_lines(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : "\n") + s;
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

void write_tracker(hid_t group, const std::string& prefix, const BestTracker& t) {
  h5::write_attribute(group, prefix + "_best", t.best);
  h5::write_attribute(group, prefix + "_best_step", t.best_step);
  h5::write_attribute(group, prefix + "_stale", t.stale);
}

BestTracker read_tracker(hid_t group, const std::string& prefix) {
  BestTracker t;
  t.best = h5::read_double_attribute(group, prefix + "_best");
  t.best_step = h5::read_int_attribute(group, prefix + "_best_step");
  t.stale = h5::read_int_attribute(group, prefix + "_stale");
  return t;
}

const char* const kCounters[] = {"epoch",
                                 "epoch_position",
                                 "epoch_batches",
                                 "epoch_samples",
                                 "epoch_skipped",
                                 "epoch_nan_skipped",
                                 "step",
                                 "samples_seen",
                                 "grad_scale_tracker",
                                 "epoch_overflow_skipped",
                                 "world_size"};

int64_t* counter(TrainerState& s, const std::string& name) {
  if (name == "epoch") return &s.epoch;
  if (name == "epoch_position") return &s.epoch_position;
  if (name == "epoch_batches") return &s.epoch_batches;
  if (name == "epoch_samples") return &s.epoch_samples;
  if (name == "epoch_skipped") return &s.epoch_skipped;
  if (name == "epoch_nan_skipped") return &s.epoch_nan_skipped;
  if (name == "step") return &s.step;
  if (name == "samples_seen") return &s.samples_seen;
  if (name == "epoch_overflow_skipped") return &s.epoch_overflow_skipped;
  if (name == "world_size") return &s.world_size;
  return &s.grad_scale_tracker;
}

void write_trainer(hid_t file, const TrainerState& state) {
  auto group = h5::create_group(file, "trainer");
  const hid_t g = group.get();
  auto& s = const_cast<TrainerState&>(state);
  for (const char* name : kCounters) h5::write_attribute(g, name, *counter(s, name));
  h5::write_attribute(g, "elapsed", state.elapsed);
  h5::write_attribute(g, "grad_scale", state.grad_scale);
  write_tracker(g, "early_stopping", state.early_stopping);
  write_tracker(g, "keep_best", state.keep_best);
  h5::write_attribute(g, "best_checkpoint", state.best_checkpoint);
  h5::write_attribute(g, "checkpoints", join_lines(state.checkpoints));
  write_accumulator(g, "window", state.window);
  write_accumulator(g, "epoch_metrics", state.epoch_metrics);
  write_doubles(g, "last_validation", state.last_validation);
  auto rows = h5::create_group(g, "rows");
  for (const auto& [split, n] : state.rows) h5::write_attribute(rows.get(), split, n);
  // random generators: libtorch's CPU generator (dropout, random init), and each CUDA device's
  auto rng = h5::create_group(g, "rng");
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    io::write_tensor(rng.get(), "cpu", gen.get_state());
  }
  if (torch::cuda::is_available()) {
    for (size_t d = 0; d < torch::cuda::device_count(); ++d) {
      auto gen = at::globalContext().defaultGenerator(
          c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(d)));
      std::lock_guard<std::mutex> lock(gen.mutex());
      io::write_tensor(rng.get(), "cuda" + std::to_string(d), gen.get_state());
    }
  }
}

TrainerState read_trainer(hid_t file, const std::string& path) {
  if (!h5::exists(file, "trainer")) throw core::DataError(path + ": no /trainer group");
  auto group = h5::open_group(file, "trainer");
  const hid_t g = group.get();
  TrainerState s;
  for (const char* name : kCounters) {
    // checkpoints written before the loss scaler counted its skipped steps, or before runs
    // were distributed, lack those counters
    const std::string counter_name = name;
    if ((counter_name == "epoch_overflow_skipped" || counter_name == "world_size") &&
        !h5::has_attribute(g, name)) {
      continue;
    }
    *counter(s, name) = h5::read_int_attribute(g, name);
  }
  s.elapsed = h5::read_double_attribute(g, "elapsed");
  s.grad_scale = h5::read_double_attribute(g, "grad_scale");
  s.early_stopping = read_tracker(g, "early_stopping");
  s.keep_best = read_tracker(g, "keep_best");
  s.best_checkpoint = h5::read_string_attribute(g, "best_checkpoint");
  s.checkpoints = split_lines(h5::read_string_attribute(g, "checkpoints"));
  read_accumulator(g, "window", s.window);
  read_accumulator(g, "epoch_metrics", s.epoch_metrics);
  auto last = h5::open_group(g, "last_validation");
  s.last_validation = read_double_attributes(last.get());
  auto rows = h5::open_group(g, "rows");
  s.rows = read_row_counts(rows.get());
  auto rng = h5::open_group(g, "rng");
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(io::read_tensor(rng.get(), "cpu"));
  }
  if (torch::cuda::is_available()) {
    for (size_t d = 0; d < torch::cuda::device_count(); ++d) {
      const std::string name = "cuda" + std::to_string(d);
      if (!h5::exists(rng.get(), name)) continue;
      auto gen = at::globalContext().defaultGenerator(
          c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(d)));
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(io::read_tensor(rng.get(), name));
    }
  }
  return s;
}

// Whatever a checkpoint from elsewhere holds, reading it ends in an engine error naming the
// file: libtorch's own checks (a generator state of the wrong size, an optimizer archive that
// does not parse) become DataErrors instead of reaching the user as libtorch's text.
template <typename Read>
auto reading(const std::string& path, Read&& read) -> decltype(read()) {
  // a crash inside HDF5 is a damaged file (exit 4), and every error names the file
  return core::reading_file(path, [&]() -> decltype(read()) {
    try {
      return read();
    } catch (const core::Error&) {
      throw;
    } catch (const std::exception& e) {
      std::string what = core::describe_exception(e);
      what = what.substr(0, what.find('\n'));
      throw core::DataError(path + ": cannot be read as a checkpoint of this script (" + what +
                            ")");
    }
  });
}

}  // namespace

std::shared_ptr<data::Source> prediction_source(const std::string& checkpoint,
                                                const data::Source& trained_on,
                                                const std::string& input) {
  core::ReadingFile guard(checkpoint);  // a crash inside HDF5 is a damaged file, exit 4
  auto file = h5::open_file(checkpoint, false);
  h5::Handle saved;
  if (h5::exists(file.get(), "data")) saved = h5::open_group(file.get(), "data");
  return trained_on.prediction_source(input, saved);
}

namespace {

void write_checkpoint_file(const std::string& temporary, const TrainSpec& spec,
                           const TrainerState& state, const std::string& run_file) {
  auto file = h5::create_file(temporary, true);
  const hid_t root = file.get();
  h5::write_attribute(root, "format_version", kCheckpointFormat);
  h5::write_attribute(root, "engine_version", core::engine_version());
  h5::write_attribute(root, "torch_version", core::torch_version());
  h5::write_attribute(root, "name", spec.name);
  h5::write_attribute(root, "run_file", run_file);
  h5::write_attribute(root, "seed", static_cast<int64_t>(spec.seed));
  h5::write_attribute(root, "step", state.step);
  h5::write_attribute(root, "epoch", state.epoch);
  h5::write_attribute(root, "created_at", io::iso_timestamp());
  write_model(root, *spec.model.module);
  write_optimizers(root, spec);
  write_trainer(root, state);
  {
    auto rng = h5::open_group(root, "trainer/rng");
    for (const auto& g : spec.generators) io::write_tensor(rng.get(), g.name, g.state());
  }
  auto hparams = h5::create_group(root, "hparams");
  io::write_hparams(hparams.get(), spec.hparams);
  if (spec.script_state.save) {
    auto script_state = h5::create_group(root, "script_state");
    spec.script_state.save(script_state.get());
  }
  auto data_group = h5::create_group(root, "data");
  spec.train_data->source().save_state(data_group);
  if (H5Fflush(root, H5F_SCOPE_GLOBAL) < 0)
    throw core::IoError("cannot flush " + temporary + h5::system_error_suffix());
}

}  // namespace

void save_checkpoint(const std::string& path, const TrainSpec& spec, const TrainerState& state,
                     const std::string& run_file) {
  const std::string temporary = path + ".tmp";
  try {
    write_checkpoint_file(temporary, spec, state, run_file);
  } catch (const core::IoError& e) {
    // a full disk or a file-size limit: the half-written file goes, the message names the path
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw core::IoError("cannot write checkpoint " + path + ": " + e.what());
  } catch (...) {
    // a script's state that cannot be saved (ctx.state holding a function): no file left
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) throw core::IoError("cannot rename " + temporary + " to " + path + ": " + ec.message());
}

namespace {

TrainerState load_checkpoint_unchecked(const std::string& path, TrainSpec& spec) {
  if (!fs::is_regular_file(path)) throw core::DataError("checkpoint " + path + " does not exist");
  auto file = h5::open_file(path, false);
  const hid_t root = file.get();
  h5::check_format_version(root, path, kCheckpointFormat);
  read_model(root, path, *spec.model.module);
  read_optimizers(root, path, spec);
  auto state = read_trainer(root, path);
  if (spec.script_state.restore && h5::exists(root, "script_state")) {
    auto script_state = h5::open_group(root, "script_state");
    spec.script_state.restore(script_state.get());
  }
  auto rng = h5::open_group(root, "trainer/rng");
  for (const auto& g : spec.generators) {
    if (h5::exists(rng.get(), g.name)) {
      g.set_state(io::read_tensor(rng.get(), g.name));
    } else {
      core::log::warn("{} holds no {} state (an older checkpoint): it goes on from its seed", path,
                      g.name);
    }
  }
  return state;
}

CheckpointInfo read_checkpoint_info_unchecked(const std::string& path) {
  if (!fs::is_regular_file(path)) throw core::DataError("checkpoint " + path + " does not exist");
  auto file = h5::open_file(path, false);
  const hid_t root = file.get();
  h5::check_format_version(root, path, kCheckpointFormat);
  if (!h5::has_attribute(root, "run_file") || !h5::exists(root, "trainer")) {
    throw core::DataError(path + ": not a checkpoint written by engine train");
  }
  CheckpointInfo info;
  info.run_file = h5::read_string_attribute(root, "run_file");
  info.seed = static_cast<uint64_t>(h5::read_int_attribute(root, "seed"));
  info.step = h5::read_int_attribute(root, "step");
  if (h5::has_attribute(root, "name")) info.name = h5::read_string_attribute(root, "name");
  auto hparams = h5::open_group(root, "hparams");
  info.hparams = io::read_hparams(hparams.get());
  auto rows = h5::open_group(root, "trainer/rows");
  info.rows = read_row_counts(rows.get());
  return info;
}

}  // namespace

TrainerState load_checkpoint(const std::string& path, TrainSpec& spec) {
  return reading(path, [&] { return load_checkpoint_unchecked(path, spec); });
}

void load_model_weights(const std::string& path, torch::nn::Module& module) {
  reading(path, [&] {
    if (!fs::is_regular_file(path)) throw core::DataError("checkpoint " + path + " does not exist");
    auto file = h5::open_file(path, false);
    h5::check_format_version(file.get(), path, kCheckpointFormat);
    read_model(file.get(), path, module);
  });
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  return reading(path, [&] { return read_checkpoint_info_unchecked(path); });
}

namespace {

// The step of "ckpt-<step>.h5"; -1 for any other name.
int64_t checkpoint_step(const fs::path& file) {
  const std::string name = file.filename().string();
  const std::string prefix = "ckpt-", suffix = ".h5";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18) return -1;
  return std::stoll(digits);
}

}  // namespace

std::pair<std::string, int64_t> newest_checkpoint_on_disk(const std::string& run_file) {
  const fs::path folder = fs::path(run_file).parent_path() / fs::path(run_file).stem();
  std::pair<std::string, int64_t> newest{"", -1};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const int64_t step = checkpoint_step(entry.path());
    if (step > newest.second && entry.is_regular_file(ec)) newest = {entry.path().string(), step};
  }
  return newest;
}

std::string resolve_checkpoint(const std::string& run_file_or_checkpoint, const std::string& flag) {
  // RUN.h5:latest, RUN.h5:best, RUN.h5:STEP (checkpoint_by_name.hpp)
  const auto named = checkpoint_name(run_file_or_checkpoint);
  const std::string& path = named ? named->first : run_file_or_checkpoint;
  if (fs::is_directory(path)) {
    throw core::UsageError(flag + " " + path +
                           ": is a folder; give a run file (.h5) or one of its checkpoints "
                           "(ckpt-N.h5)");
  }
  if (!fs::is_regular_file(path)) throw core::UsageError(flag + " " + path + ": no such file");
  h5::quiet_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0) throw core::IoError(flag + " " + path + ": not an HDF5 file");
  core::ReadingFile guard(path);  // a crash inside HDF5 is a damaged file, exit 4
  // without HDF5's lock: every rank of a resumed group reads the run file that rank 0 then
  // opens for writing, and a reader's lock would make that open fail
  auto file = h5::open_file_while_written(path);
  const hid_t root = file.get();
  if (h5::exists(root, "trainer") && h5::exists(root, "model")) {
    if (!named) return path;
    throw core::UsageError(flag + " " + run_file_or_checkpoint + ": " + path +
                           " is a checkpoint itself; :" + named->second +
                           " names one of a run file's (RUN.h5:" + named->second + ")");
  }
  if (named && named->second != "latest") return named_checkpoint(path, named->second, flag);
  // a checkpoint renamed into place that the run file has not noted (a kill in between)
  const auto on_disk = newest_checkpoint_on_disk(path);
  const bool unnoted = !on_disk.first.empty() && h5::exists(root, "metrics");
  if (!h5::exists(root, "checkpoints")) {
    if (unnoted) return on_disk.first;
    if (h5::exists(root, "metrics")) {
      throw core::DataError(flag + " " + path +
                            ": the run stopped before writing its first checkpoint" +
                            (flag == "--resume" ? "; start it again without --resume" : ""));
    }
    throw core::DataError(flag + " " + path + ": neither a checkpoint nor a run file");
  }
  auto group = h5::open_group(root, "checkpoints");
  if (!h5::has_attribute(group.get(), "latest")) {
    if (unnoted) return on_disk.first;
    throw core::DataError(flag + " " + path + ": the run wrote no checkpoint yet");
  }
  // found by location, never by the path recorded: the run file's own checkpoint folder
  // (runs/<name>/<run>/ beside runs/<name>/<run>.h5), so that a copied run folder continues
  // from its own files and a moved one from where it is now
  const std::string recorded = h5::read_string_attribute(group.get(), "latest");
  const fs::path folder = fs::path(path).parent_path() / fs::path(path).stem();
  const std::string latest = (folder / fs::path(recorded).filename()).string();
  // one newer than the noted one, by step and by time (a checkpoint left from before a resume
  // from an older one has the higher step but is older)
  std::error_code ec;
  if (on_disk.second > checkpoint_step(latest) && fs::is_regular_file(latest, ec) &&
      fs::last_write_time(on_disk.first, ec) > fs::last_write_time(latest, ec)) {
    return on_disk.first;
  }
  if (!fs::is_regular_file(latest)) {
    throw core::DataError(flag + " " + path + ": its latest checkpoint " +
                          fs::path(recorded).filename().string() + " is missing from " +
                          folder.string());
  }
  return latest;
}

}  // namespace engine::train
