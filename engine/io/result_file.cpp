#include "engine/io/result_file.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <thread>

#include "engine/core/damaged_file_guard.hpp"
#include "engine/core/errors.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/io/tensor_archive.hpp"

namespace engine::io {
namespace {

h5::Handle open_result(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw core::IoError(path + ": no such file");
  h5::quiet_errors();
  std::error_code error;
  if (std::filesystem::file_size(path, error) == 0 && !error) {
    throw core::IoError(path +
                        " is empty: the name a run, sweep or search reserved before it stopped "
                        "(killed before it wrote its file's first contents)");
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) throw core::IoError(path + " is not an HDF5 file");
  return h5::open_file_while_written(path);
}

ResultKind kind_of(hid_t file) {
  if (h5::exists(file, "metrics")) return ResultKind::kRun;
  if (h5::exists(file, "results")) return ResultKind::kBenchmark;
  // a sweep killed before its first point: /points is there, /results not yet
  if (h5::exists(file, "points") && h5::has_attribute(file, "kind") &&
      h5::read_string_attribute(file, "kind") == "benchmark") {
    return ResultKind::kBenchmark;
  }
  if (h5::exists(file, "trials")) return ResultKind::kSearch;
  if (h5::exists(file, "model")) return ResultKind::kCheckpoint;
  return ResultKind::kOther;
}

}  // namespace

MetricSplit read_metric_split(hid_t group) {
  MetricSplit split;
  for (const auto& name : members(group)) {
    if (name == "step") {
      split.step = h5::read_ints(group, name);
    } else if (name == "epoch") {
      split.epoch = h5::read_doubles(group, name);
    } else if (name == "time") {
      split.time = h5::read_doubles(group, name);
    } else {
      split.series[name] = h5::read_doubles(group, name);
    }
  }
  // a file killed between two series' extensions can hold one row more in some of them: the
  // rows every series has are the ones that were flushed whole
  size_t rows = split.step.size();
  rows = std::min({rows, split.epoch.size(), split.time.size()});
  for (const auto& [name, values] : split.series) rows = std::min(rows, values.size());
  // steps only grow; a kill inside a flush can leave a new chunk sized but never written, whose
  // rows read as HDF5's fill value, step 0 after larger ones: they were never logged
  for (size_t i = 1; i < rows; ++i) {
    if (split.step[i] < split.step[i - 1]) rows = i;
  }
  split.step.resize(rows);
  split.epoch.resize(rows);
  split.time.resize(rows);
  for (auto& [name, values] : split.series) values.resize(rows);
  return split;
}

namespace {

std::string attribute_text(const h5::Attribute& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else {
          std::ostringstream out;
          out << v;
          return out.str();
        }
      },
      value);
}

}  // namespace

ResultKind result_kind(const std::string& path) {
  return core::reading_file(path, [&] {
    const auto file = open_result(path);
    return kind_of(file.get());
  });
}

std::string kind_name(ResultKind kind) {
  switch (kind) {
    case ResultKind::kRun:
      return "a run file";
    case ResultKind::kBenchmark:
      return "a benchmark file";
    case ResultKind::kSearch:
      return "a search file";
    case ResultKind::kCheckpoint:
      return "a checkpoint";
    case ResultKind::kOther:
      break;
  }
  return "an HDF5 file the engine did not write";
}

std::string RunFile::text(const std::string& attribute) const {
  const auto it = attributes.find(attribute);
  return it == attributes.end() ? std::string() : attribute_text(it->second);
}

std::string RunFile::status() const {
  const std::string stored = text("status");
  if (stored == "running" && !held) return "crashed or killed";
  return stored;
}

namespace {

RunFile read_run_once(const std::string& path, bool held) {
  return core::reading_file(path, [&] {
    RunFile run;
    run.path = path;
    run.held = held;
    const auto file = open_result(path);
    const ResultKind kind = kind_of(file.get());
    if (kind != ResultKind::kRun) {
      throw core::IoError(path + " is " + kind_name(kind) + ", not a run file (no /metrics)");
    }
    h5::check_format_version(file.get(), path, kRunFormatVersion);
    run.attributes = h5::read_attributes(file.get());
    if (h5::exists(file.get(), "hparams")) {
      run.hparams = read_hparams(h5::open_group(file.get(), "hparams").get());
    }
    const auto metrics = h5::open_group(file.get(), "metrics");
    for (const auto& split : members(metrics.get())) {
      run.metrics[split] = read_metric_split(h5::open_group(metrics.get(), split).get());
    }
    if (h5::exists(file.get(), "checkpoints")) {
      const auto group = h5::open_group(file.get(), "checkpoints");
      for (const auto& [name, value] : h5::read_attributes(group.get())) {
        if (name == "latest") {
          run.latest_checkpoint = attribute_text(value);
        } else if (name == "best") {
          run.best_checkpoint = attribute_text(value);
        } else if (const auto* step = std::get_if<int64_t>(&value)) {
          run.checkpoints[name] = *step;
        }
      }
    }
    if (h5::exists(file.get(), "script")) run.script_text = read_string(file.get(), "script");
    return run;
  });
}

}  // namespace

RunFile read_run_file(const std::string& path) {
  // A file being written can be caught between a row's datasets and its flush: read again.
  constexpr int kAttempts = 5;
  for (int attempt = 1;; ++attempt) {
    const bool held = h5::held_by_a_writer(path);
    try {
      return read_run_once(path, held);
    } catch (const core::IoError&) {
      if (!held || attempt == kAttempts) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace engine::io
