#include "engine/io/run_writer.hpp"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <limits>
#include <type_traits>

#include "engine/core/damaged_file_guard.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/sha256.hpp"
#include "engine/core/version.hpp"
#include "engine/io/tensor_archive.hpp"

namespace engine::io {
namespace {

// A series of the run file must hold at least the rows its checkpoint counted.
void check_rows_kept(const std::string& path, const std::string& series, size_t length,
                     int64_t expected) {
  if (length >= static_cast<size_t>(expected)) return;
  throw core::DataError("run file " + path + ": /metrics/" + series + " has " +
                        std::to_string(length) + " rows, the checkpoint expects " +
                        std::to_string(expected) + "; it is not this checkpoint's run file");
}

// The device and inode a path names now (0, 0 when it names nothing).
void remember_identity(const std::string& path, uint64_t* device, uint64_t* inode) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  *device = static_cast<uint64_t>(st.st_dev);
  *inode = static_cast<uint64_t>(st.st_ino);
}

namespace fs = std::filesystem;

std::string local_time(const char* format) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

std::string iso_timestamp() {
  return local_time("%Y-%m-%dT%H:%M:%S");
}

bool reserve_new_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ::close(fd);
    return true;
  }
  if (errno == EEXIST) return false;
  throw core::IoError("cannot create " + path + ": " + std::strerror(errno));
}

std::string RunWriter::new_run_path(const std::string& root, const std::string& name) {
  const fs::path dir = fs::path(root) / (name.empty() ? "run" : name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw core::IoError("cannot create run folder " + dir.string() + ": " + ec.message());
  h5::remove_stale_staged_files(dir.string());
  const std::string stamp = local_time("%Y%m%d-%H%M%S");
  for (int n = 0;; ++n) {
    const fs::path p = dir / (stamp + (n ? "-" + std::to_string(n) : "") + ".h5");
    // created empty here, atomically, so that two runs started in the same second (a search's
    // trials, a job array) never pick the same name; the writer takes the empty file over
    if (reserve_new_file(p.string())) return p.string();
  }
}

void write_origin(hid_t root, int64_t format_version, const std::string& name,
                  const std::string& command, const std::string& script_path) {
  h5::write_attribute(root, "format_version", format_version);
  h5::write_attribute(root, "engine_version", core::engine_version());
  h5::write_attribute(root, "torch_version", core::torch_version());
  h5::write_attribute(root, "name", name);
  h5::write_attribute(root, "command", command);
  h5::write_attribute(root, "script", script_path);
  h5::write_attribute(root, "started_at", iso_timestamp());
  h5::write_attribute(root, "status", std::string(core::name_of(core::FileStatus::kRunning)));
}

RunWriter::RunWriter(const std::string& path, const RunInfo& info) : path_(path) {
  file_ = h5::create_staged_file(path);
  const hid_t root = file_.get();
  write_origin(root, kRunFormatVersion, info.name, info.command, info.script_path);
  if (!info.description.empty()) h5::write_attribute(root, "description", info.description);
  h5::write_attribute(root, "hostname", hostname());
  h5::write_attribute(root, "device", info.device);
  h5::write_attribute(root, "threads", static_cast<int64_t>(info.threads));
  h5::write_attribute(root, "world_size", static_cast<int64_t>(info.world_size));
  h5::write_attribute(root, "seed", static_cast<int64_t>(info.seed));
  if (!info.run_name.empty()) h5::write_attribute(root, "run_name", info.run_name);
  std::string maximized, minimized;
  for (const auto& [metric, larger] : info.metric_directions) {
    std::string& names = larger ? maximized : minimized;
    names += (names.empty() ? "" : ",") + metric;
  }
  if (!maximized.empty()) h5::write_attribute(root, "maximized_metrics", maximized);
  if (!minimized.empty()) h5::write_attribute(root, "minimized_metrics", minimized);
  h5::write_attribute(root, "allocator",
                      std::string(core::allocator_name(core::allocator_in_use())));
  for (const auto& [name, value] : info.device_settings) h5::write_attribute(root, name, value);
  for (const auto& [name, value] : info.machine_facts) h5::write_attribute(root, name, value);
  auto script = h5::write_string_dataset(root, "script", info.script_text);
  h5::write_attribute(script.get(), "sha256", core::sha256_hex(info.script_text));
  metrics_ = h5::create_group(root, "metrics");
  h5::publish_staged_file(root, path_);
  remember_identity(path_, &device_, &inode_);
  room_ = core::take_disk_room(
      path_, [this](const std::string& why) { finish(core::FileStatus::kFailed, why); });
  flush();
}

RunWriter::RunWriter(const std::string& path, const std::map<std::string, int64_t>& rows_kept,
                     const std::string& command, const Segment& segment)
    : path_(path) {
  // changed in a copy put in its place once every split is cut back: a crash, a damaged
  // series or a full disk on the way leaves the run file as it was
  try {
    continue_in_copy(rows_kept, command, segment);
  } catch (...) {
    splits_.clear();  // the datasets, the group, then the file
    metrics_ = h5::Handle();
    file_ = h5::Handle();
    h5::discard_staged_copy(path);
    throw;
  }
}

void RunWriter::continue_in_copy(const std::map<std::string, int64_t>& rows_kept,
                                 const std::string& command, const Segment& segment) {
  file_ = h5::open_staged_copy(path_);
  const hid_t root = file_.get();
  h5::write_attribute(root, "status", std::string(core::name_of(core::FileStatus::kRunning)));
  h5::write_attribute(root, "resumed_at", iso_timestamp());
  h5::write_attribute(root, "resume_command", command);
  const int64_t resumes =
      h5::has_attribute(root, "resumes") ? h5::read_int_attribute(root, "resumes") : 0;
  h5::write_attribute(root, "resumes", resumes + 1);
  if (segment.threads > 0) {
    const std::string prefix = "resume_" + std::to_string(resumes + 1) + "_";
    h5::write_attribute(root, prefix + "threads", segment.threads);
    h5::write_attribute(root, prefix + "device", segment.device);
    h5::write_attribute(root, prefix + "step", segment.step);
  }
  metrics_ = h5::require_group(root, "metrics");
  for (const auto& name : members(metrics_.get())) {
    auto it = rows_kept.find(name);
    open_existing_split(name, it == rows_kept.end() ? 0 : it->second);
  }
  h5::publish_staged_file(root, path_);
  remember_identity(path_, &device_, &inode_);
  room_ = core::take_disk_room(
      path_, [this](const std::string& why) { finish(core::FileStatus::kFailed, why); });
  flush();
}

RunWriter::Segment RunWriter::latest_segment(const std::string& path) {
  return core::reading_file(path, [&] {
    auto file = h5::open_file_while_written(path);
    const hid_t root = file.get();
    Segment segment;
    const int64_t resumes =
        h5::has_attribute(root, "resumes") ? h5::read_int_attribute(root, "resumes") : 0;
    for (int64_t n = resumes; n >= 0; --n) {  // the latest one recorded
      const std::string prefix = n > 0 ? "resume_" + std::to_string(n) + "_" : "";
      if (!h5::has_attribute(root, prefix + "threads")) continue;
      segment.threads = h5::read_int_attribute(root, prefix + "threads");
      if (h5::has_attribute(root, prefix + "device")) {
        segment.device = h5::read_string_attribute(root, prefix + "device");
      }
      if (n > 0 && h5::has_attribute(root, prefix + "step")) {
        segment.step = h5::read_int_attribute(root, prefix + "step");
      }
      break;
    }
    return segment;
  });
}

void RunWriter::check_continuable(const std::string& path,
                                  const std::map<std::string, int64_t>& rows_kept) {
  core::reading_file(path, [&] {
    auto file = h5::open_file_while_written(path);
    if (!h5::exists(file.get(), "metrics")) {
      throw core::DataError("run file " + path + ": it has no /metrics group");
    }
    auto metrics = h5::open_group(file.get(), "metrics");
    for (const auto& name : members(metrics.get())) {
      auto group = h5::open_group(metrics.get(), name);
      const auto columns = members(group.get());
      for (const char* needed : {"step", "epoch", "time"}) {
        if (std::find(columns.begin(), columns.end(), needed) == columns.end()) {
          throw core::DataError("run file " + path + ": /metrics/" + name + " lacks its " + needed +
                                " series");
        }
      }
      const auto kept = rows_kept.find(name);
      const int64_t expected = kept == rows_kept.end() ? 0 : kept->second;
      for (const auto& column : columns) {
        auto ds = h5::open_dataset(group.get(), column);
        const size_t length = h5::series_length(ds.get());
        check_rows_kept(path, name + "/" + column, length, expected);
      }
    }
  });
}

void RunWriter::open_existing_split(const std::string& name, int64_t rows_kept) {
  Split s;
  s.group = h5::open_group(metrics_.get(), name);
  for (const auto& column : members(s.group.get())) {
    auto ds = h5::open_dataset(s.group.get(), column);
    const size_t length = h5::series_length(ds.get());
    check_rows_kept(path_, name + "/" + column, length, rows_kept);
    h5::truncate_series(ds.get(), static_cast<size_t>(rows_kept));
    if (column == "step")
      s.step = std::move(ds);
    else if (column == "epoch")
      s.epoch = std::move(ds);
    else if (column == "time")
      s.time = std::move(ds);
    else
      s.series.emplace(column, std::move(ds));
  }
  if (!s.step || !s.epoch || !s.time) {
    throw core::DataError("run file " + path_ + ": /metrics/" + name +
                          " lacks its step, epoch or time series");
  }
  s.rows = static_cast<size_t>(rows_kept);
  splits_.emplace(name, std::move(s));
}

void RunWriter::record_checkpoint(const std::string& checkpoint_path, int64_t step) {
  auto group = h5::require_group(file_.get(), "checkpoints");
  h5::write_attribute(group.get(), checkpoint_path, step);
  h5::write_attribute(group.get(), "latest", checkpoint_path);
  flush();
}

void RunWriter::record_best_checkpoint(const std::string& checkpoint_path) {
  auto group = h5::require_group(file_.get(), "checkpoints");
  h5::write_attribute(group.get(), "best", checkpoint_path);
  flush();
}

void RunWriter::forget_checkpoint(const std::string& checkpoint_path) {
  if (!h5::exists(file_.get(), "checkpoints")) return;
  auto group = h5::open_group(file_.get(), "checkpoints");
  if (h5::has_attribute(group.get(), checkpoint_path)) {
    H5Adelete(group.get(), checkpoint_path.c_str());
  }
  flush();
}

void RunWriter::write_evaluated(const std::string& checkpoint, int64_t step,
                                const std::string& run_file) {
  h5::write_attribute(file_.get(), "checkpoint", checkpoint);
  h5::write_attribute(file_.get(), "checkpoint_step", step);
  h5::write_attribute(file_.get(), "evaluated_run", run_file);
  flush();
}

void RunWriter::write_stop_reason(const std::string& reason) {
  h5::write_attribute(file_.get(), "stop_reason", reason);
  write_out();
}

RunWriter::~RunWriter() {
  // A writer dropped without finish() belongs to a run that ended by an exception that the
  // caller reports; leave status as it is unless finish was called.
  try {
    if (file_) flush();
  } catch (...) {
  }
}

void RunWriter::write_hparams(const std::map<std::string, HParam>& hparams) {
  auto group = h5::require_group(file_.get(), "hparams");
  io::write_hparams(group.get(), hparams);
  flush();
}

void write_hparams(hid_t group, const std::map<std::string, HParam>& hparams) {
  for (const auto& [name, value] : hparams) {
    std::visit([&, &key = name](const auto& v) { h5::write_attribute(group, key, v); }, value);
  }
}

std::map<std::string, HParam> read_hparams(hid_t group) {
  std::map<std::string, HParam> out;
  for (const auto& [name, value] : h5::read_attributes(group)) {
    std::visit(
        [&out, &key = name](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, int64_t>) {
            out[key] = static_cast<double>(v);  // hyperparameters are numbers
          } else {
            out[key] = v;
          }
        },
        value);
  }
  return out;
}

RunWriter::Split& RunWriter::split(const std::string& name) {
  auto it = splits_.find(name);
  if (it != splits_.end()) return it->second;
  Split s;
  s.group = h5::create_group(metrics_.get(), name);
  s.step = h5::create_series(s.group.get(), "step", H5T_STD_I64LE);
  s.epoch = h5::create_series(s.group.get(), "epoch", H5T_IEEE_F64LE);
  s.time = h5::create_series(s.group.get(), "time", H5T_IEEE_F64LE);
  return splits_.emplace(name, std::move(s)).first->second;
}

void RunWriter::append_metrics(const std::string& split_name, int64_t step, double epoch,
                               double time, const std::map<std::string, double>& values) {
  for (const auto& [name, value] : values) {
    if (name == "step" || name == "epoch" || name == "time") {
      throw core::UsageError("metric name '" + name + "' is reserved in the run file");
    }
  }
  waiting_rows_[split_name].push_back(Row{step, epoch, time, values});
  ++waiting_;
  if (waiting_ >= policy_.rows) {
    flush();
  } else {
    flush_if_due();
  }
}

void RunWriter::flush_if_due() {
  if (waiting_ == 0) return;
  const std::chrono::duration<double> since = std::chrono::steady_clock::now() - last_flush_;
  if (since.count() >= policy_.seconds) flush();
}

// Each split's waiting rows in one append per series: a series first named by one of them is
// created and back-filled with NaN for the rows before it.
void RunWriter::write_waiting_rows() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (auto& [split_name, rows] : waiting_rows_) {
    if (rows.empty()) continue;
    Split& s = split(split_name);
    for (const auto& row : rows) {
      for (const auto& [name, _] : row.values) {
        if (s.series.count(name)) continue;
        auto series = h5::create_series(s.group.get(), name, H5T_IEEE_F64LE);
        const std::vector<double> fill(s.rows, nan);
        h5::append_series(series.get(), H5T_NATIVE_DOUBLE, fill.data(), fill.size());
        s.series.emplace(name, std::move(series));
      }
    }
    std::vector<int64_t> steps;
    std::vector<double> epochs, times, column;
    for (const auto& row : rows) {
      steps.push_back(row.step);
      epochs.push_back(row.epoch);
      times.push_back(row.time);
    }
    h5::append_series(s.step.get(), H5T_NATIVE_INT64, steps.data(), steps.size());
    h5::append_series(s.epoch.get(), H5T_NATIVE_DOUBLE, epochs.data(), epochs.size());
    h5::append_series(s.time.get(), H5T_NATIVE_DOUBLE, times.data(), times.size());
    for (auto& [name, series] : s.series) {
      column.clear();
      for (const auto& row : rows) {
        const auto it = row.values.find(name);
        column.push_back(it == row.values.end() ? nan : it->second);
      }
      h5::append_series(series.get(), H5T_NATIVE_DOUBLE, column.data(), column.size());
    }
    s.rows += rows.size();
    rows.clear();
  }
  waiting_ = 0;
}

void RunWriter::finish(core::FileStatus status, const std::string& error) {
  const hid_t root = file_.get();
  h5::write_attribute(root, "status", std::string(core::name_of(status)));
  h5::write_attribute(root, "finished_at", iso_timestamp());
  h5::write_attribute(root, "peak_resident_bytes", core::peak_resident_bytes());
  if (!error.empty()) h5::write_attribute(root, "error", error);
  write_out();
}

void RunWriter::flush() {
  room_.renew();
  write_out();
}

void RunWriter::write_out() {
  write_waiting_rows();
  if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) {
    throw core::IoError("HDF5: cannot flush " + path_ + h5::system_error_suffix());
  }
  last_flush_ = std::chrono::steady_clock::now();
  check_still_there();
}

void RunWriter::check_still_there() {
  if (gone_ || inode_ == 0) return;
  struct stat now {};
  if (::stat(path_.c_str(), &now) == 0 && static_cast<uint64_t>(now.st_dev) == device_ &&
      static_cast<uint64_t>(now.st_ino) == inode_)
    return;
  gone_ = true;  // said once; the failure's own flush must not say it again
  throw core::IoError(path_ +
                      " was deleted or replaced during the run, so what the run logs from now on "
                      "would be lost: the run stops here (its checkpoints are kept)");
}

}  // namespace engine::io
