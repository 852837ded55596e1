#include "engine/io/search_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/core/damaged_file_guard.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/sha256.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/io/tensor_archive.hpp"

namespace engine::io {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSearchFormatVersion = 1;

void write_metric_splits(hid_t parent, const std::map<std::string, MetricSplit>& metrics) {
  auto group = h5::create_group(parent, "metrics");
  for (const auto& [name, split] : metrics) {
    auto g = h5::create_group(group.get(), name);
    h5::write_ints(g.get(), "step", split.step);
    h5::write_doubles(g.get(), "epoch", split.epoch);
    h5::write_doubles(g.get(), "time", split.time);
    for (const auto& [series, values] : split.series) h5::write_doubles(g.get(), series, values);
  }
}

std::string text_attribute(hid_t object, const std::string& name) {
  return h5::has_attribute(object, name) ? h5::read_string_attribute(object, name) : "";
}

}  // namespace

std::string SearchFile::new_path(const std::string& root, const std::string& name, int64_t shard,
                                 int64_t shards) {
  const fs::path path = RunWriter::new_run_path((fs::path(root) / "search").string(), name);
  if (shards <= 1) return path.string();
  fs::remove(path);  // the shard's own name below is reserved instead
  const std::string tag = "-shard-" + std::to_string(shard) + "-of-" + std::to_string(shards);
  for (int n = 0;; ++n) {
    const fs::path p = path.parent_path() /
                       (path.stem().string() + tag + (n ? "-" + std::to_string(n) : "") + ".h5");
    if (reserve_new_file(p.string())) return p.string();
  }
}

std::string SearchFile::trials_folder(const std::string& search_file) {
  const fs::path p(search_file);
  return (p.parent_path() / p.stem()).string();
}

SearchFile::SearchFile(const std::string& path, const SearchInfo& info)
    : path_(path), lock_(core::with_folder_made(path), "the search file " + path, "search") {
  file_ = h5::create_staged_file(path);
  const hid_t root = file_.get();
  write_origin(root, kSearchFormatVersion, info.name, info.command, info.script_path);
  h5::write_attribute(root, "kind", std::string("search"));
  h5::write_attribute(root, "seed", static_cast<int64_t>(info.seed));
  std::string overrides;
  for (const auto& o : info.overrides) overrides += (overrides.empty() ? "" : "\n") + o;
  h5::write_attribute(root, "overrides", overrides);
  h5::write_attribute(root, "shard", info.shard);
  h5::write_attribute(root, "shards", info.shards);
  auto searcher = h5::create_group(root, "searcher");
  for (const auto& [name, value] : info.searcher) h5::write_attribute(searcher.get(), name, value);
  auto space = h5::create_group(root, "space");
  for (const auto& [name, text] : info.spaces) h5::write_attribute(space.get(), name, text);
  auto script = h5::write_string_dataset(root, "script", info.script_text);
  h5::write_attribute(script.get(), "sha256", core::sha256_hex(info.script_text));
  trials_ = h5::create_group(root, "trials");
  h5::publish_staged_file(root, path_);
  room_ = core::take_disk_room(
      path_, [this](const std::string& why) { finish(core::FileStatus::kFailed, why); });
}

SearchFile::SearchFile(const std::string& path, const std::string& command)
    : path_(path), lock_(path, "the search file " + path, "search") {
  core::ReadingFile guard(path);
  file_ = h5::open_file(path, true);
  const hid_t root = file_.get();
  if (!h5::exists(root, "trials")) {
    throw core::DataError(path + " is not a search file (it has no /trials group)");
  }
  const int64_t resumes =
      h5::has_attribute(root, "resumes") ? h5::read_int_attribute(root, "resumes") : 0;
  h5::write_attribute(root, "resumes", resumes + 1);
  h5::write_attribute(root, "resumed_at", iso_timestamp());
  h5::write_attribute(root, "resume_command", command);
  h5::write_attribute(root, "status", std::string(core::name_of(core::FileStatus::kRunning)));
  trials_ = h5::open_group(root, "trials");
  h5::flush(root, path_);
  room_ = core::take_disk_room(
      path_, [this](const std::string& why) { finish(core::FileStatus::kFailed, why); });
}

void SearchFile::write_trial(const SearchTrialRecord& trial) {
  room_.renew();
  const std::string name = std::to_string(trial.id);
  h5::remove(trials_.get(), name);
  auto group = h5::create_group(trials_.get(), name);
  const hid_t g = group.get();
  h5::write_attribute(g, "id", trial.id);
  h5::write_attribute(g, "status", std::string(core::name_of(trial.status)));
  h5::write_attribute(g, "rung", trial.rung);
  h5::write_attribute(g, "restarts", trial.restarts);
  h5::write_attribute(g, "run_file", trial.run_file);
  if (!trial.reason.empty()) h5::write_attribute(g, "reason", trial.reason);
  h5::write_attribute(g, "metric",
                      trial.rung_metrics.empty() ? std::nan("") : trial.rung_metrics.back());
  h5::write_doubles(g, "rung_metrics", trial.rung_metrics);
  auto hparams = h5::create_group(g, "hparams");
  write_hparams(hparams.get(), trial.hparams);
  write_metric_splits(g, trial.metrics);
  h5::flush(file_.get(), path_);
}

void SearchFile::write_best(const SearchBest& best) {
  room_.renew();
  const hid_t root = file_.get();
  h5::remove(root, "best");
  auto group = h5::create_group(root, "best");
  h5::write_attribute(group.get(), "trial", best.trial);
  h5::write_attribute(group.get(), "metric", best.metric);
  h5::write_attribute(group.get(), "value", best.value);
  auto hparams = h5::create_group(group.get(), "hparams");
  write_hparams(hparams.get(), best.hparams);
  h5::flush(root, path_);
}

void SearchFile::finish(core::FileStatus status, const std::string& error) {
  const hid_t root = file_.get();
  h5::write_attribute(root, "status", std::string(core::name_of(status)));
  h5::write_attribute(root, "finished_at", iso_timestamp());
  if (!error.empty()) h5::write_attribute(root, "error", error);
  h5::flush(root, path_);
}

SearchContents read_search_file(const std::string& path) {
  return core::reading_file(path, [&] {
    if (!fs::is_regular_file(path)) throw core::IoError(path + ": no such file");
    h5::quiet_errors();
    if (H5Fis_hdf5(path.c_str()) <= 0) throw core::IoError(path + " is not an HDF5 file");
    SearchContents out;
    out.path = path;
    out.held = h5::held_by_a_writer(path);
    const auto file = h5::open_file_while_written(path);
    const hid_t root = file.get();
    if (!h5::exists(root, "trials")) {
      throw core::IoError(path + " is not a search file (no /trials)");
    }
    h5::check_format_version(root, path, kSearchFormatVersion);
    out.attributes = h5::read_attributes(root);
    if (h5::exists(root, "searcher")) {
      for (const auto& [name, value] :
           h5::read_attributes(h5::open_group(root, "searcher").get())) {
        out.attributes["searcher." + name] = value;
      }
    }
    if (h5::exists(root, "space")) {
      const auto space = h5::open_group(root, "space");
      for (const auto& [name, _] : h5::read_attributes(space.get())) {
        out.spaces[name] = text_attribute(space.get(), name);
      }
    }
    const auto trials = h5::open_group(root, "trials");
    for (const auto& name : members(trials.get())) {
      const auto group = h5::open_group(trials.get(), name);
      const hid_t g = group.get();
      SearchTrialRecord t;
      t.id = h5::read_int_attribute(g, "id");
      const std::string status = text_attribute(g, "status");
      const auto known = core::trial_status(status);
      if (!known) {
        throw core::DataError("trial " + std::to_string(t.id) + " has the status '" + status +
                              "', not one of running, paused, completed, stopped, failed, "
                              "interrupted");
      }
      t.status = *known;
      t.rung = h5::read_int_attribute(g, "rung");
      t.restarts = h5::read_int_attribute(g, "restarts");
      t.run_file = text_attribute(g, "run_file");
      t.reason = text_attribute(g, "reason");
      t.rung_metrics = h5::read_doubles(g, "rung_metrics");
      if (h5::exists(g, "hparams")) t.hparams = read_hparams(h5::open_group(g, "hparams").get());
      if (h5::exists(g, "metrics")) {
        const auto metrics = h5::open_group(g, "metrics");
        for (const auto& split : members(metrics.get())) {
          t.metrics[split] = read_metric_split(h5::open_group(metrics.get(), split).get());
        }
      }
      out.trials.push_back(std::move(t));
    }
    std::sort(out.trials.begin(), out.trials.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    if (h5::exists(root, "best")) {
      const auto group = h5::open_group(root, "best");
      SearchBest best;
      best.trial = h5::read_int_attribute(group.get(), "trial");
      best.metric = text_attribute(group.get(), "metric");
      best.value = h5::read_double_attribute(group.get(), "value");
      if (h5::exists(group.get(), "hparams")) {
        best.hparams = read_hparams(h5::open_group(group.get(), "hparams").get());
      }
      out.best = best;
    }
    if (h5::exists(root, "script")) out.script_text = read_string(root, "script");
    return out;
  });
}

}  // namespace engine::io
