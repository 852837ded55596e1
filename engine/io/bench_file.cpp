#include "engine/io/bench_file.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>

#include "engine/core/damaged_file_guard.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/sha256.hpp"
#include "engine/core/version.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/io/tensor_archive.hpp"

namespace engine::io {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kBenchFormatVersion = 1;

void write_attributes(hid_t object, const std::map<std::string, h5::Attribute>& attributes) {
  for (const auto& [name, value] : attributes) h5::write_attribute(object, name, value);
}

BenchPoint read_point_at(hid_t points, int64_t index, bool with_batches) {
  const auto name = std::to_string(index);
  if (!h5::exists(points, name)) {
    throw core::DataError("the benchmark file has no point " + name);
  }
  auto group = h5::open_group(points, name);
  BenchPoint p;
  p.row = row_from(h5::read_attributes(group.get()));
  if (h5::exists(group.get(), "parameters")) {
    auto params = h5::open_group(group.get(), "parameters");
    p.parameters = h5::read_attributes(params.get());
  }
  if (h5::exists(group.get(), "details")) {
    auto details = h5::open_group(group.get(), "details");
    p.details = h5::read_attributes(details.get());
  }
  if (with_batches && h5::exists(group.get(), "batch_ms")) {
    p.batch_ms = h5::read_doubles(group.get(), "batch_ms");
    if (h5::exists(group.get(), "batch_repeat")) {
      p.batch_repeat = h5::read_ints(group.get(), "batch_repeat");
    }
    if (h5::exists(group.get(), "part_ms")) {
      auto parts = h5::open_group(group.get(), "part_ms");
      for (const char* part : {"data", "forward", "backward", "optimizer"}) {
        if (h5::exists(parts.get(), part)) p.part_ms[part] = h5::read_doubles(parts.get(), part);
      }
    }
    if (h5::exists(group.get(), "resources")) {
      auto resources = h5::open_group(group.get(), "resources");
      for (const char* series :
           {"seconds", "cpu_percent", "resident_mb", "gpu_percent", "gpu_memory_mb"}) {
        if (h5::exists(resources.get(), series)) {
          p.resources[series] = h5::read_doubles(resources.get(), series);
        }
      }
    }
  }
  return p;
}

}  // namespace

std::string BenchFile::new_path(const std::string& root, const std::string& name) {
  return RunWriter::new_run_path((fs::path(root) / "bench").string(), name);
}

std::string BenchFile::latest_path(const std::string& root, const std::string& name) {
  const fs::path dir = fs::path(root) / "bench" / name;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  // the file written last is the sweep's latest
  std::string latest;
  fs::file_time_type latest_time{};
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    // an empty file is a name reserved by a sweep that stopped before writing (new_run_path)
    if (entry.path().extension() != ".h5" || fs::file_size(entry.path(), ec) == 0) continue;
    const auto time = fs::last_write_time(entry.path(), ec);
    if (ec) continue;
    if (latest.empty() || time > latest_time || (time == latest_time && entry.path() > latest)) {
      latest = entry.path().string();
      latest_time = time;
    }
  }
  return latest;
}

BenchContents BenchFile::read_all(const std::string& path) {
  return core::reading_file(path, [&] {
    BenchContents contents;
    contents.path = path;
    auto file = h5::open_file_while_written(path);
    contents.attributes = h5::read_attributes(file.get());
    if (!h5::exists(file.get(), "points")) {
      throw core::IoError(path + " is not a benchmark file (no /points)");
    }
    h5::check_format_version(file.get(), path, kBenchFormatVersion);
    auto points = h5::open_group(file.get(), "points");
    std::vector<int64_t> indices;  // a sweep killed early or resumed may leave gaps
    for (const auto& name : members(points.get())) {
      if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
        indices.push_back(std::stoll(name));
      }
    }
    std::sort(indices.begin(), indices.end());
    for (int64_t i : indices) contents.points.push_back(read_point_at(points.get(), i, true));
    return contents;
  });
}

BenchPoint BenchFile::read_point(const std::string& path, int64_t index) {
  return core::reading_file(path, [&] {
    auto file = h5::open_file(path, false);
    auto points = h5::open_group(file.get(), "points");
    return read_point_at(points.get(), index, true);
  });
}

BenchFile::BenchFile(const std::string& path, const BenchInfo& info)
    : path_(path), lock_(core::with_folder_made(path), "the benchmark file " + path, "sweep") {
  std::error_code ec;
  // an empty file is a name reserved for this one (RunWriter::new_run_path), not a file to go on
  const bool existing = fs::exists(path, ec) && fs::file_size(path, ec) > 0;
  core::ReadingFile guard(path);  // an existing file goes on: read first
  file_ = existing ? h5::open_file(path, true) : h5::create_staged_file(path);
  const hid_t root = file_.get();
  if (!existing) {
    h5::write_attribute(root, "format_version", kBenchFormatVersion);
    h5::write_attribute(root, "kind", std::string("benchmark"));
    h5::write_attribute(root, "started_at", iso_timestamp());
    h5::write_attribute(root, "runs", int64_t{1});
  } else {
    if (!h5::exists(root, "points")) {
      throw core::DataError(path + " is not a benchmark file (it has no /points group)");
    }
    const auto runs = h5::has_attribute(root, "runs") ? h5::read_int_attribute(root, "runs") : 1;
    h5::write_attribute(root, "runs", runs + 1);
    h5::write_attribute(root, "resumed_at", iso_timestamp());
  }
  h5::write_attribute(root, "engine_version", core::engine_version());
  h5::write_attribute(root, "torch_version", core::torch_version());
  h5::write_attribute(root, "name", info.name);
  if (!info.description.empty()) h5::write_attribute(root, "description", info.description);
  h5::write_attribute(root, "command", info.command);
  h5::write_attribute(root, "script", info.script_path);
  h5::write_attribute(root, "status", std::string(core::name_of(core::FileStatus::kRunning)));
  write_attributes(root, info.machine);
  h5::remove(root, "script");
  auto script = h5::write_string_dataset(root, "script", info.script_text);
  h5::write_attribute(script.get(), "sha256", core::sha256_hex(info.script_text));
  h5::remove(root, "plan");
  h5::write_string_dataset(root, "plan", info.plan_text);
  points_ = h5::require_group(root, "points");
  if (existing) {
    h5::flush(root, path_);
  } else {
    h5::publish_staged_file(root, path_);
  }
  room_ = core::take_disk_room(
      path_, [this](const std::string& why) { finish(core::FileStatus::kFailed, why); });
}

BenchFile::~BenchFile() {
  if (file_) H5Fflush(file_.get(), H5F_SCOPE_GLOBAL);  // a destructor cannot say it failed
}

int64_t BenchFile::point_count() const {
  H5G_info_t info{};
  H5Gget_info(points_.get(), &info);
  return static_cast<int64_t>(info.nlinks);
}

std::vector<BenchPoint> BenchFile::points() const {
  std::vector<BenchPoint> out;
  const int64_t n = point_count();
  for (int64_t i = 0; i < n; ++i) out.push_back(read_point_at(points_.get(), i, false));
  return out;
}

BenchPoint BenchFile::point_with_batches(int64_t index) const {
  return read_point_at(points_.get(), index, true);
}

void BenchFile::write_point(const BenchPoint& point) {
  room_.renew();
  const auto name = std::to_string(point.row.point);
  h5::remove(points_.get(), name);
  auto group = h5::create_group(points_.get(), name);
  write_attributes(group.get(), row_attributes(point.row));
  auto params = h5::create_group(group.get(), "parameters");
  write_attributes(params.get(), point.parameters);
  auto details = h5::create_group(group.get(), "details");
  write_attributes(details.get(), point.details);
  h5::write_doubles(group.get(), "batch_ms", point.batch_ms);
  h5::write_ints(group.get(), "batch_repeat", point.batch_repeat);
  if (!point.part_ms.empty()) {
    auto parts = h5::create_group(group.get(), "part_ms");
    for (const auto& [part, ms] : point.part_ms) h5::write_doubles(parts.get(), part, ms);
  }
  if (!point.resources.empty()) {
    auto resources = h5::create_group(group.get(), "resources");
    for (const auto& [series, values] : point.resources) {
      h5::write_doubles(resources.get(), series, values);
    }
  }
  write_row(point.row);
  h5::flush(file_.get(), path_);
}

void BenchFile::update_row(const BenchRow& row) {
  const auto name = std::to_string(row.point);
  if (!h5::exists(points_.get(), name)) {
    throw core::IoError("the benchmark file " + path_ + " has no point " + name + " to update");
  }
  room_.renew();
  auto group = h5::open_group(points_.get(), name);
  write_attributes(group.get(), row_attributes(row));
  write_row(row);
  h5::flush(file_.get(), path_);
}

void BenchFile::write_row(const BenchRow& row) {
  const auto type = results_type();
  const hid_t root = file_.get();
  h5::Handle table = h5::exists(root, "results") ? h5::open_dataset(root, "results")
                                                 : h5::create_series(root, "results", type.get());
  const auto at = static_cast<hsize_t>(row.point);
  if (h5::series_length(table.get()) <= at) {
    hsize_t size[1] = {at + 1};
    if (H5Dset_extent(table.get(), size) < 0) throw core::IoError("HDF5: cannot extend /results");
  }
  h5::Handle file_space(H5Dget_space(table.get()), H5Sclose, "read a dataspace");
  hsize_t start[1] = {at}, count[1] = {1};
  H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
  h5::Handle memory_space(H5Screate_simple(1, count, nullptr), H5Sclose, "make a dataspace");
  const auto record = results_record(row);
  if (H5Dwrite(table.get(), type.get(), memory_space.get(), file_space.get(), H5P_DEFAULT,
               record.data()) < 0) {
    throw core::IoError("HDF5: cannot write row " + std::to_string(row.point) + " of /results");
  }
}

void BenchFile::finish(core::FileStatus status, const std::string& error) {
  h5::write_attribute(file_.get(), "status", std::string(core::name_of(status)));
  h5::write_attribute(file_.get(), "finished_at", iso_timestamp());
  if (!error.empty()) h5::write_attribute(file_.get(), "error", error);
  h5::flush(file_.get(), path_);
}

}  // namespace engine::io
