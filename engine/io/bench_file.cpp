#include "engine/io/bench_file.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>

#include "engine/core/damaged_file_guard.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/sha256.hpp"
#include "engine/core/version.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/io/tensor_archive.hpp"

namespace engine::io {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kBenchFormatVersion = 1;

// /results as the file holds it: one compound record per point, strings variable-length.
struct Record {
  int64_t point;
  const char* point_id;
  const char* model;
  const char* phase;
  const char* device;
  const char* dtype;
  int64_t batch_size, world_size, threads;
  const char* status;
  const char* reason;
  int64_t num_batches;
  double mean_ms, std_ms, p50_ms, p90_ms, p99_ms, throughput, throughput_p50;
  double throughput_per_rank, scaling_efficiency;
  double data_ms, forward_ms, backward_ms, optimizer_ms;
  int64_t peak_resident_bytes, peak_device_bytes, repeats;
  double p50_spread;
  int8_t unstable;
  const char* error_kind;
  const char* label;
};

h5::Handle record_type() {
  const auto text = h5::string_type();
  const auto flag = h5::bool_type();
  h5::Handle type(H5Tcreate(H5T_COMPOUND, sizeof(Record)), H5Tclose, "make the results type");
  const hid_t t = type.get(), s = text.get(), i = H5T_NATIVE_INT64, d = H5T_NATIVE_DOUBLE;
#define ENGINE_FIELD(name, kind) H5Tinsert(t, #name, offsetof(Record, name), kind)
  ENGINE_FIELD(point, i);
  ENGINE_FIELD(point_id, s);
  ENGINE_FIELD(model, s);
  ENGINE_FIELD(phase, s);
  ENGINE_FIELD(device, s);
  ENGINE_FIELD(dtype, s);
  ENGINE_FIELD(batch_size, i);
  ENGINE_FIELD(world_size, i);
  ENGINE_FIELD(threads, i);
  ENGINE_FIELD(status, s);
  ENGINE_FIELD(reason, s);
  ENGINE_FIELD(num_batches, i);
  ENGINE_FIELD(mean_ms, d);
  ENGINE_FIELD(std_ms, d);
  ENGINE_FIELD(p50_ms, d);
  ENGINE_FIELD(p90_ms, d);
  ENGINE_FIELD(p99_ms, d);
  ENGINE_FIELD(throughput, d);
  ENGINE_FIELD(throughput_p50, d);
  ENGINE_FIELD(throughput_per_rank, d);
  ENGINE_FIELD(scaling_efficiency, d);
  ENGINE_FIELD(data_ms, d);
  ENGINE_FIELD(forward_ms, d);
  ENGINE_FIELD(backward_ms, d);
  ENGINE_FIELD(optimizer_ms, d);
  ENGINE_FIELD(peak_resident_bytes, i);
  ENGINE_FIELD(peak_device_bytes, i);
  ENGINE_FIELD(repeats, i);
  ENGINE_FIELD(p50_spread, d);
  ENGINE_FIELD(unstable, flag.get());
  ENGINE_FIELD(error_kind, s);
  ENGINE_FIELD(label, s);
#undef ENGINE_FIELD
  return type;
}

Record record_of(const BenchRow& r) {
  return Record{r.point,
                r.point_id.c_str(),
                r.model.c_str(),
                r.phase.c_str(),
                r.device.c_str(),
                r.dtype.c_str(),
                r.batch_size,
                r.world_size,
                r.threads,
                core::name_of(r.status),
                r.reason.c_str(),
                r.num_batches,
                r.mean_ms,
                r.std_ms,
                r.p50_ms,
                r.p90_ms,
                r.p99_ms,
                r.throughput,
                r.throughput_p50,
                r.throughput_per_rank,
                r.scaling_efficiency,
                r.data_ms,
                r.forward_ms,
                r.backward_ms,
                r.optimizer_ms,
                r.peak_resident_bytes,
                r.peak_device_bytes,
                r.repeats,
                r.p50_spread,
                static_cast<int8_t>(r.unstable ? 1 : 0),
                r.error_kind.c_str(),
                r.label.c_str()};
}

// The row's fields as attributes of /points/<i>, so that the point reads back without the table.
std::map<std::string, h5::Attribute> row_attributes(const BenchRow& r) {
  return {{"point", r.point},
          {"point_id", r.point_id},
          {"batch_family", r.batch_family},
          {"model", r.model},
          {"phase", r.phase},
          {"device", r.device},
          {"dtype", r.dtype},
          {"batch_size", r.batch_size},
          {"world_size", r.world_size},
          {"threads", r.threads},
          {"num_batches", r.num_batches},
          {"status", std::string(core::name_of(r.status))},
          {"reason", r.reason},
          {"error_kind", r.error_kind},
          {"mean_ms", r.mean_ms},
          {"std_ms", r.std_ms},
          {"p50_ms", r.p50_ms},
          {"p90_ms", r.p90_ms},
          {"p99_ms", r.p99_ms},
          {"throughput", r.throughput},
          {"throughput_p50", r.throughput_p50},
          {"throughput_per_rank", r.throughput_per_rank},
          {"scaling_efficiency", r.scaling_efficiency},
          {"data_ms", r.data_ms},
          {"forward_ms", r.forward_ms},
          {"backward_ms", r.backward_ms},
          {"optimizer_ms", r.optimizer_ms},
          {"peak_resident_bytes", r.peak_resident_bytes},
          {"peak_device_bytes", r.peak_device_bytes},
          {"repeats", r.repeats},
          {"p50_spread", r.p50_spread},
          {"unstable", r.unstable},
          {"label", r.label}};
}

template <typename T>
T pick(const std::map<std::string, h5::Attribute>& from, const std::string& name, T otherwise) {
  const auto it = from.find(name);
  if (it == from.end()) return otherwise;
  if (const auto* v = std::get_if<T>(&it->second)) return *v;
  return otherwise;
}

BenchRow row_from(const std::map<std::string, h5::Attribute>& a) {
  BenchRow r;
  r.point = pick<int64_t>(a, "point", 0);
  r.point_id = pick<std::string>(a, "point_id", "");
  r.batch_family = pick<std::string>(a, "batch_family", "");
  r.model = pick<std::string>(a, "model", "");
  r.phase = pick<std::string>(a, "phase", "");
  r.device = pick<std::string>(a, "device", "");
  r.dtype = pick<std::string>(a, "dtype", "");
  r.batch_size = pick<int64_t>(a, "batch_size", 0);
  r.world_size = pick<int64_t>(a, "world_size", 1);
  r.threads = pick<int64_t>(a, "threads", 0);
  r.num_batches = pick<int64_t>(a, "num_batches", 0);
  const std::string status = pick<std::string>(a, "status", "");
  const auto known = core::point_status(status);
  if (!known) {
    throw core::DataError("point " + std::to_string(r.point) + " has the status '" + status +
                          "', not one of ok, failed, timeout, skipped, inactive");
  }
  r.status = *known;
  r.reason = pick<std::string>(a, "reason", "");
  r.error_kind = pick<std::string>(a, "error_kind", "");
  r.mean_ms = pick<double>(a, "mean_ms", BenchRow::kNone);
  r.std_ms = pick<double>(a, "std_ms", BenchRow::kNone);
  r.p50_ms = pick<double>(a, "p50_ms", BenchRow::kNone);
  r.p90_ms = pick<double>(a, "p90_ms", BenchRow::kNone);
  r.p99_ms = pick<double>(a, "p99_ms", BenchRow::kNone);
  r.throughput = pick<double>(a, "throughput", BenchRow::kNone);
  r.throughput_p50 = pick<double>(a, "throughput_p50", BenchRow::kNone);
  r.throughput_per_rank = pick<double>(a, "throughput_per_rank", BenchRow::kNone);
  r.scaling_efficiency = pick<double>(a, "scaling_efficiency", BenchRow::kNone);
  r.data_ms = pick<double>(a, "data_ms", BenchRow::kNone);
  r.forward_ms = pick<double>(a, "forward_ms", BenchRow::kNone);
  r.backward_ms = pick<double>(a, "backward_ms", BenchRow::kNone);
  r.optimizer_ms = pick<double>(a, "optimizer_ms", BenchRow::kNone);
  r.peak_resident_bytes = pick<int64_t>(a, "peak_resident_bytes", 0);
  r.peak_device_bytes = pick<int64_t>(a, "peak_device_bytes", 0);
  r.repeats = pick<int64_t>(a, "repeats", 0);
  r.p50_spread = pick<double>(a, "p50_spread", BenchRow::kNone);
  r.unstable = pick<bool>(a, "unstable", false);
  r.label = pick<std::string>(a, "label", "");
  return r;
}

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

BenchFile::BenchFile(const std::string& path, const BenchInfo& info) : path_(path) {
  std::error_code ec;
  // an empty file is a name reserved for this one (RunWriter::new_run_path), not a file to go on
  const bool existing = fs::exists(path, ec) && fs::file_size(path, ec) > 0;
  if (!existing) {
    const auto folder = fs::path(path).parent_path();
    if (!folder.empty()) fs::create_directories(folder, ec);
  }
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
  const auto type = record_type();
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
  const Record record = record_of(row);
  if (H5Dwrite(table.get(), type.get(), memory_space.get(), file_space.get(), H5P_DEFAULT,
               &record) < 0) {
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
