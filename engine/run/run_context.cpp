#include "engine/run/run_context.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include "engine/core/activity.hpp"
#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/format.hpp"
#include "engine/core/gpu_facts.hpp"
#include "engine/core/log.hpp"
#include "engine/core/metric_names.hpp"
#include "engine/core/run_lock.hpp"
#include "engine/core/seed.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/result_file.hpp"
#include "engine/train/checkpoint.hpp"

namespace engine::run {
namespace {

namespace fs = std::filesystem;

// This job, as --resume auto tells its runs from others' in one --out: its hyperparameters
// after --set, and its seed when one is fixed (--seed, or the script's).
struct JobIdentity {
  std::map<std::string, io::HParam> hparams;
  std::optional<uint64_t> seed;
  std::string run_name;  // --run_name ("" when not given: a run of no name)
};

// Why the run is another job's ("lr 0.2 here, 0.1 there"), or "" when it is this job's.
std::string other_job(const io::RunFile& run, const JobIdentity& job) {
  const auto name = run.attributes.find("run_name");
  const auto* stored_name =
      name == run.attributes.end() ? nullptr : std::get_if<std::string>(&name->second);
  const std::string run_name = stored_name ? *stored_name : std::string();
  if (run_name != job.run_name) {
    return run_name.empty() ? "it has no --run_name" : "its --run_name is " + run_name;
  }
  if (run.hparams != job.hparams) {
    std::vector<std::string> differ;
    for (const auto& [key, value] : job.hparams) {
      const auto it = run.hparams.find(key);
      if (it == run.hparams.end() || it->second != value) differ.push_back(key);
    }
    for (const auto& [key, _] : run.hparams) {
      if (!job.hparams.count(key)) differ.push_back(key);
    }
    return "its hyperparameters differ: " + core::join(differ, ", ");
  }
  const auto seed = run.attributes.find("seed");
  const auto* stored = seed == run.attributes.end() ? nullptr : std::get_if<int64_t>(&seed->second);
  if (job.seed && stored && static_cast<uint64_t>(*stored) != *job.seed) {
    return "its seed is " + std::to_string(*stored) + ", this job's " + std::to_string(*job.seed);
  }
  return {};
}

// --resume auto: the newest run file of this job (the script, its hyperparameters, its seed)
// under root (by the time last written) decides; runs of other jobs, and runs another live
// process writes (a parallel job of an array), are passed over. One not completed goes on
// when it has a checkpoint; without one, a new run starts and it is left as it is. A completed
// one is named too: engine train then says it is done, so that a fixed command restarted
// after its run completed does not train again.
std::string auto_resume_target(const std::string& root, const std::string& name,
                               const JobIdentity& job) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, std::string>> runs;
  for (const auto& entry : fs::directory_iterator(fs::path(root) / name, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".h5") continue;
    runs.emplace_back(fs::last_write_time(entry.path(), ec), entry.path().string());
  }
  std::sort(runs.begin(), runs.end(), std::greater<>());
  for (const auto& [written, path] : runs) {
    if (const auto owner = core::RunLock::holder(path)) {
      core::log::info("--resume auto: {} is being written by {}: another job's, passed over", path,
                      owner->text());
      continue;
    }
    io::RunFile run;
    try {
      run = io::read_run_file(path);
    } catch (const core::Error& e) {  // an empty reservation, a damaged file: not a run
      core::log::debug("--resume auto: {} skipped ({})", path, e.what());
      continue;
    }
    const std::string why = other_job(run, job);
    if (!why.empty()) {
      core::log::info("--resume auto: {} is another job's ({}), passed over", path, why);
      continue;
    }
    if (run.status() != core::name_of(core::FileStatus::kCompleted) &&
        run.latest_checkpoint.empty() && train::newest_checkpoint_on_disk(path).first.empty()) {
      core::log::info("--resume auto: the newest run {} has no checkpoint: it is left as it is",
                      path);
      return {};
    }
    return path;
  }
  return {};
}

uint64_t fresh_seed() {
  return static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) %
         1000000007ULL;
}

}  // namespace

RunContext::RunContext(RunRequest request, CheckpointUse use, distributed::Group* group)
    : request_(std::move(request)), use_(use), world_size_(group ? group->size() : 1) {
  const torch::Device device = core::parse_device(request_.device);
  core::apply_device_settings(request_.device_settings);
  session_ = std::make_unique<lua::Session>(request_.lua);
  script_ = session_->train_script(request_.script);
  if (request_.checkpoint == "auto" && request_.checkpoint_flag == "--resume") {
    // rank 0 looks; every rank goes on with what it found
    JobIdentity job;
    script_->apply_overrides(request_.overrides);  // again below: the same values
    job.hparams = script_->hparams();
    job.seed = request_.seed ? request_.seed : script_->seed();
    job.run_name = request_.run_name;
    std::string target = !group || group->leader()
                             ? auto_resume_target(request_.runs_root, script_->name(), job)
                             : std::string();
    if (group) target = group->share(target);
    if (target.empty()) {
      core::log::info("--resume auto: no run of '{}' under {} to go on with; starting one",
                      script_->name(), request_.runs_root);
    } else {
      core::log::info("--resume auto: going on with {}", target);
    }
    request_.checkpoint = target;
  }
  if (!request_.checkpoint.empty()) open_checkpoint(group);
  if (has_checkpoint()) script_->set_hparams(info_.hparams, checkpoint_origin(), info_.name);
  if (!request_.overrides.empty()) {
    const auto before = script_->hparams();
    script_->apply_overrides(request_.overrides);
    if (has_checkpoint() && use_ == CheckpointUse::kResume) {
      // said only for values that differ: a fixed command restarted (--resume auto) repeats
      // the --set its run began with
      std::vector<std::string> changed;
      for (const auto& [key, value] : script_->hparams()) {
        const auto was = before.find(key);
        if (was == before.end() || was->second != value) changed.push_back(key);
      }
      if (!changed.empty()) {
        core::log::warn(
            "--set changes hyperparameters of a resumed run ({}); its run file records "
            "the new values",
            core::join(changed, ", "));
      }
    }
  }
  if (has_checkpoint()) {
    if (request_.seed && *request_.seed != info_.seed) {
      core::log::warn("--seed {} ignored: the checkpoint's seed is {}", *request_.seed, info_.seed);
    }
    seed_ = info_.seed;
  } else {
    seed_ = request_.seed ? *request_.seed : script_->seed().value_or(fresh_seed());
  }
  if (group) {
    seed_ = std::stoull(group->share(std::to_string(seed_)));
    // every rank has read the checkpoint's run file before rank 0 opens it for writing
    if (has_checkpoint()) group->barrier();
  }
  core::seed_everything(seed_);
  build_spec(device);
  if (has_checkpoint() && use_ == CheckpointUse::kWeights) {
    about_checkpoint([&] { train::load_model_weights(checkpoint_, *spec_.model.module); });
    core::log::info("model weights from {} (step {})", checkpoint_, info_.step);
  }
}

// rank 0 finds the checkpoint; a rank whose machine cannot read it there (a node-local --out)
// reads rank 0's bytes, sent over the group
void RunContext::open_checkpoint(distributed::Group* group) {
  std::string resolved = !group || group->leader() ? about_checkpoint([&] {
    return train::resolve_checkpoint(request_.checkpoint, request_.checkpoint_flag);
  })
                                                   : std::string();
  if (group) resolved = group->share(resolved);
  checkpoint_ =
      group ? distributed::file_from_rank0(*group, resolved, local_checkpoint_) : resolved;
  info_ = about_checkpoint([&] { return train::read_checkpoint_info(checkpoint_); });
  // by location: the run file given, or the one beside the checkpoint's folder
  const fs::path folder = fs::path(resolved).parent_path();
  run_file_by_location_ = resolved != request_.checkpoint ? request_.checkpoint
                          : folder.has_filename()         ? folder.string() + ".h5"
                                                          : "";
}

void RunContext::build_spec(torch::Device device) {
  // the length the run is planned for, as hp.budget for its schedules: --budget when this run
  // trains a stage of it (a search trial's rung, also hp.rung), else the length it trains to
  const std::optional<int64_t> length = request_.steps ? request_.steps : request_.epochs;
  if (length) {
    script_->set_budget(request_.steps ? "steps" : "epochs", request_.budget.value_or(*length),
                        request_.budget ? length : std::nullopt);
  }
  {
    core::Activity activity("building the script's model, data and optimizer");
    spec_ = script_->build(device, seed_);
  }
  if (request_.epochs) {
    spec_.options.epochs = *request_.epochs;
    spec_.options.steps = 0;
  }
  if (request_.steps) spec_.options.steps = *request_.steps;
}

RunContext::~RunContext() {
  // a new run file's name reserved (an empty file) but never opened: the command failed first
  if (run_file_ || continuing_ || run_path_.empty()) return;
  std::error_code ec;
  if (fs::is_regular_file(run_path_, ec) && fs::file_size(run_path_, ec) == 0 && !ec) {
    fs::remove(run_path_, ec);
  }
}

std::string RunContext::checkpoint_origin() const {
  std::string origin = request_.checkpoint_flag + " " + request_.checkpoint;
  if (!checkpoint_.empty() && checkpoint_ != request_.checkpoint)
    origin += " (checkpoint " + checkpoint_ + ")";
  return origin;
}

void RunContext::rethrow_about_checkpoint(const std::exception& e) const {
  std::string message = e.what();
  // "PATH: what" from the reader: the origin below names the path already
  if (!checkpoint_.empty() && message.rfind(checkpoint_ + ": ", 0) == 0) {
    message.erase(0, checkpoint_.size() + 2);
  }
  const std::string origin = checkpoint_origin();
  const std::string named =
      message.rfind(request_.checkpoint_flag + " ", 0) == 0 ? message : origin + ": " + message;
  if (dynamic_cast<const core::IoError*>(&e)) throw core::IoError(named);
  throw core::DataError(named);
}

io::RunInfo RunContext::run_info() const {
  io::RunInfo info;
  info.name = spec_.name;
  info.description = spec_.description;
  info.command = request_.command;
  info.script_path = request_.script;
  const auto text = core::read_file(request_.script);
  info.script_text.assign(text.begin(), text.end());
  info.device = spec_.device.str();
  info.threads = request_.threads;
  info.world_size = world_size_;
  info.seed = seed_;
  info.run_name = request_.run_name;
  info.metric_directions = core::declared_directions();
  for (const auto& [name, on] : core::device_settings_in_force()) {
    info.device_settings.emplace_back(name, on);
  }
  info.device_settings.emplace_back(
      "memory_format", std::string(spec_.options.channels_last ? "channels_last" : "contiguous"));
  info.device_settings.emplace_back("cuda_graphs", spec_.options.cuda_graphs);
  info.machine_facts = core::gpu_facts(spec_.device);
  info.machine_facts.emplace_back("openmp_runtime", core::loaded_openmp_runtimes_text());
  return info;
}

const std::string& RunContext::reserve_run_file(const std::string& root,
                                                const std::string& suffix) {
  if (!run_path_.empty()) return run_path_;
  const bool resuming = has_checkpoint() && use_ == CheckpointUse::kResume;
  if (resuming && !run_file_by_location_.empty() && fs::is_regular_file(run_file_by_location_)) {
    lock_ = std::make_unique<core::RunLock>(run_file_by_location_, checkpoint_origin());
    try {
      io::RunWriter::check_continuable(run_file_by_location_, info_.rows);
      run_path_ = run_file_by_location_;
      continuing_ = true;
      warn_if_not_exact(io::RunWriter::latest_segment(run_path_));
      return run_path_;
    } catch (const core::Error& e) {  // damaged (by a crash, a full disk): kept as it is
      core::log::warn(
          "cannot continue the run file {} ({}); it is left as it is and the resumed "
          "run gets a new one",
          run_file_by_location_, e.what());
      lock_.reset();
    }
  } else if (resuming) {
    core::log::warn(
        "{}: no run file {} beside the checkpoint's folder; the resumed run gets a new one",
        checkpoint_origin(), run_file_by_location_.empty() ? "(none)" : run_file_by_location_);
  }
  run_path_ = io::RunWriter::new_run_path(root, spec_.name + suffix);
  lock_ = std::make_unique<core::RunLock>(run_path_, "the run file " + run_path_);
  return run_path_;
}

void RunContext::warn_if_not_exact(const io::RunWriter::Segment& before) const {
  if (before.threads > 0 && before.threads != request_.threads) {
    core::log::warn(
        "{}: this run trained with {} threads until step {}, and goes on with {}: its "
        "results will differ from an uninterrupted run's (--threads {} keeps them "
        "bit-identical); the run file records each stretch's setting",
        checkpoint_origin(), before.threads, info_.step, request_.threads, before.threads);
  }
  if (!before.device.empty() && before.device != spec_.device.str()) {
    core::log::warn(
        "{}: this run trained on {} until step {}, and goes on on {}: its results "
        "will differ from an uninterrupted run's (--device {} keeps them); the run "
        "file records each stretch's device",
        checkpoint_origin(), before.device, info_.step, spec_.device.str(), before.device);
  }
}

io::RunWriter& RunContext::open_run_file(const std::string& root, const std::string& suffix) {
  if (run_file_) throw std::logic_error("the run file is opened once");
  reserve_run_file(root, suffix);
  // continued in a copy put in its place: a failure here (a full disk) leaves it as it was
  const io::RunWriter::Segment segment{request_.threads, spec_.device.str(), info_.step};
  run_file_ = continuing_ ? std::make_unique<io::RunWriter>(run_path_, info_.rows, request_.command,
                                                            segment)
                          : std::make_unique<io::RunWriter>(run_path_, run_info());
  run_file_->write_hparams(script_->hparams());
  return *run_file_;
}

io::RunWriter& RunContext::run_file() {
  if (!run_file_) throw std::logic_error("open_run_file() first");
  return *run_file_;
}

}  // namespace engine::run
