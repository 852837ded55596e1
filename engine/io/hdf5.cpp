#include "engine/io/hdf5.hpp"

#include "engine/io/cut_short.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/staged_output.hpp"

namespace engine::io::h5 {
namespace {

using core::IoError;

herr_t find_system_error(unsigned, const H5E_error2_t* error, void* out) {
  // HDF5's file drivers record a failed write as "... errno = 28, error message = 'No space
  // left on device' ..."
  const std::string text = error->desc ? error->desc : "";
  const std::string marker = "error message = '";
  const auto at = text.find(marker);
  if (at == std::string::npos) return 0;
  const auto end = text.find('\'', at + marker.size());
  *static_cast<std::string*>(out) = text.substr(at + marker.size(), end - at - marker.size());
  return 1;
}

}  // namespace

void check_status(herr_t status, const std::string& what) {
  if (status < 0) throw IoError("HDF5: cannot " + what + system_error_suffix());
}

void flush(hid_t file, const std::string& path) {
  if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) {
    throw IoError("HDF5: cannot flush " + path + system_error_suffix());
  }
}

std::string system_error_suffix() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_system_error, &message);
  return message.empty() ? "" : " (" + message + ")";
}

namespace {

hid_t check(hid_t id, const std::string& what) {
  if (id < 0) throw IoError("HDF5: cannot " + what + system_error_suffix());
  return id;
}

Handle scalar_space() {
  return Handle(H5Screate(H5S_SCALAR), H5Sclose, "make a dataspace");
}

// Attributes cannot be overwritten in place with another type: delete, then create.
Handle fresh_attribute(hid_t object, const std::string& name, hid_t type) {
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  auto space = scalar_space();
  return Handle(H5Acreate2(object, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose, "create attribute '" + name + "'");
}

}  // namespace

Handle string_type() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "make a string type");
  check_status(H5Tset_size(type.get(), H5T_VARIABLE), "make a string type");
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "make a string type");
  return type;
}

Handle::Handle(hid_t id, Closer closer, const std::string& what)
    : id_(check(id, what)), closer_(closer) {}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    closer_ = other.closer_;
    other.id_ = -1;
  }
  return *this;
}

void Handle::reset() {
  if (id_ >= 0 && closer_) closer_(id_);
  id_ = -1;
}

std::string library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

void skip_cleanup_at_exit() {
  H5dont_atexit();
}

void quiet_errors() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

Handle create_file(const std::string& path, bool overwrite) {
  quiet_errors();
  // (names reserved by an empty file are taken over by create_staged_file, not here)
  return Handle(
      H5Fcreate(path.c_str(), overwrite ? H5F_ACC_TRUNC : H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT),
      H5Fclose, "create file " + path);
}

namespace {

using core::staged_name;

}  // namespace

Handle create_staged_file(const std::string& path) {
  quiet_errors();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !(S_ISREG(st.st_mode) && st.st_size == 0)) {
    throw IoError("HDF5: cannot create file " + path + ": a file of that name exists");
  }
  return Handle(H5Fcreate(staged_name(path).c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                H5Fclose, "create file " + path);
}

void publish_staged_file(hid_t file, const std::string& path) {
  if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) {
    throw IoError("HDF5: cannot flush " + path + system_error_suffix());
  }
  if (::rename(staged_name(path).c_str(), path.c_str()) != 0) {
    throw IoError("cannot rename " + staged_name(path) + " to " + path + ": " +
                  std::strerror(errno));
  }
}

Handle open_staged_copy(const std::string& path) {
  quiet_errors();
  std::error_code error;
  std::filesystem::copy_file(path, staged_name(path),
                             std::filesystem::copy_options::overwrite_existing, error);
  if (error) {
    discard_staged_copy(path);
    throw IoError("cannot copy " + path + " to change it: " + error.message());
  }
  lengthen_to_recorded_end(staged_name(path));  // a file killed while extended (cut_short.hpp)
  return Handle(H5Fopen(staged_name(path).c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose,
                "open file " + path);
}

void discard_staged_copy(const std::string& path) noexcept {
  std::error_code error;
  std::filesystem::remove(staged_name(path), error);
}

void remove_stale_staged_files(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code error;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 6 || name[0] != '.' || name.compare(name.size() - 5, 5, ".part") != 0) {
      continue;
    }
    const auto written = fs::last_write_time(entry.path(), error);
    if (!error && now - written > std::chrono::minutes(1)) fs::remove(entry.path(), error);
  }
}

void check_format_version(hid_t root, const std::string& path, int64_t newest_readable) {
  if (!has_attribute(root, "format_version")) return;
  int64_t version = 0;
  try {
    version = read_int_attribute(root, "format_version");
  } catch (const core::Error&) {
    throw core::DataError(path + ": its format_version is not a number: the file is damaged");
  }
  if (version < 1) {
    throw core::DataError(path + ": format_version " + std::to_string(version) +
                          " is not a version: the file is damaged");
  }
  if (version > newest_readable) {
    const std::string by = has_attribute(root, "engine_version")
                               ? " (engine " + read_string_attribute(root, "engine_version") + ")"
                               : "";
    throw core::DataError(path + ": format_version " + std::to_string(version) +
                          " was written by a newer engine" + by + "; this one reads up to " +
                          std::to_string(newest_readable) + ": update the engine to read it");
  }
}

Handle create_group(hid_t parent, const std::string& name) {
  return Handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                "create group " + name);
}

Handle open_group(hid_t parent, const std::string& name) {
  return Handle(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose, "open group " + name);
}

Handle require_group(hid_t parent, const std::string& name) {
  return exists(parent, name) ? open_group(parent, name) : create_group(parent, name);
}

bool exists(hid_t parent, const std::string& name) {
  return H5Lexists(parent, name.c_str(), H5P_DEFAULT) > 0;
}

void write_attribute(hid_t object, const std::string& name, const std::string& value) {
  auto type = string_type();
  auto attr = fresh_attribute(object, name, type.get());
  const char* p = value.c_str();
  check_status(H5Awrite(attr.get(), type.get(), &p), "write attribute '" + name + "'");
}

void write_attribute(hid_t object, const std::string& name, double value) {
  auto attr = fresh_attribute(object, name, H5T_IEEE_F64LE);
  check_status(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value), "write attribute '" + name + "'");
}

void write_attribute(hid_t object, const std::string& name, int64_t value) {
  auto attr = fresh_attribute(object, name, H5T_STD_I64LE);
  check_status(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), "write attribute '" + name + "'");
}

Handle bool_type() {
  Handle type(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose, "make a bool type");
  int8_t f = 0, t = 1;
  H5Tenum_insert(type.get(), "FALSE", &f);
  H5Tenum_insert(type.get(), "TRUE", &t);
  return type;
}

// Stored as h5py's bool enum, so h5py reads them back as True/False.
void write_attribute(hid_t object, const std::string& name, bool value) {
  auto type = bool_type();
  auto attr = fresh_attribute(object, name, type.get());
  int8_t v = value ? 1 : 0;
  check_status(H5Awrite(attr.get(), type.get(), &v), "write attribute '" + name + "'");
}

namespace {

// "runs/a.h5: /results/train/loss": an object and its file, for messages about what it holds
std::string object_name(hid_t object) {
  char file[1024] = "", name[512] = "";
  H5Fget_name(object, file, sizeof file);
  H5Iget_name(object, name, sizeof name);
  return std::string(file) + ": " + name;
}

// Opens an attribute that must hold one value: reading one of several values into a single
// variable would write past it, and a file from elsewhere may hold anything under the name.
Handle open_single_attribute(hid_t object, const std::string& name) {
  Handle attr(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose, "open attribute " + name);
  Handle space(H5Aget_space(attr.get()), H5Sclose, "read the dataspace of attribute " + name);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count != 1) {
    throw core::DataError(object_name(object) + ": attribute '" + name + "' holds " +
                          std::to_string(count) + " values, where one is expected");
  }
  return attr;
}

}  // namespace

std::string read_string_attribute(hid_t object, const std::string& name) {
  Handle attr = open_single_attribute(object, name);
  auto type = string_type();
  char* p = nullptr;
  check_status(H5Aread(attr.get(), type.get(), &p), "read attribute " + name);
  std::string out = p ? p : "";
  H5free_memory(p);
  return out;
}

Handle write_string_dataset(hid_t parent, const std::string& name, const std::string& value) {
  auto type = string_type();
  auto space = scalar_space();
  Handle ds(H5Dcreate2(parent, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT,
                       H5P_DEFAULT),
            H5Dclose, "create dataset " + name);
  const char* p = value.c_str();
  check_status(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &p),
               "write dataset " + name);
  return ds;
}

Handle create_series(hid_t parent, const std::string& name, hid_t type) {
  hsize_t dims[1] = {0}, max_dims[1] = {H5S_UNLIMITED}, chunk[1] = {256};
  Handle space(H5Screate_simple(1, dims, max_dims), H5Sclose, "make a dataspace");
  Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "make dataset properties");
  check_status(H5Pset_chunk(props.get(), 1, chunk), "set chunking");
  return Handle(
      H5Dcreate2(parent, name.c_str(), type, space.get(), H5P_DEFAULT, props.get(), H5P_DEFAULT),
      H5Dclose, "create dataset " + name);
}

size_t series_length(hid_t dataset) {
  Handle space(H5Dget_space(dataset), H5Sclose, "read a dataspace");
  // a series has one dimension; a file from elsewhere may hold anything under its name
  if (H5Sget_simple_extent_ndims(space.get()) != 1) {
    throw core::DataError(object_name(dataset) + " is not a series: it has " +
                          std::to_string(H5Sget_simple_extent_ndims(space.get())) +
                          " dimensions, not 1");
  }
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  return dims[0];
}

void truncate_series(hid_t dataset, size_t length) {
  if (series_length(dataset) <= length) return;
  hsize_t dims[1] = {length};
  check_status(H5Dset_extent(dataset, dims), "truncate a series");
}

Handle open_dataset(hid_t parent, const std::string& name) {
  return Handle(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + name);
}

int64_t read_int_attribute(hid_t object, const std::string& name) {
  Handle attr = open_single_attribute(object, name);
  int64_t value = 0;
  check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), "read attribute " + name);
  return value;
}

double read_double_attribute(hid_t object, const std::string& name) {
  Handle attr = open_single_attribute(object, name);
  double value = 0;
  check_status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), "read attribute " + name);
  return value;
}

bool has_attribute(hid_t object, const std::string& name) {
  return H5Aexists(object, name.c_str()) > 0;
}

void append_series(hid_t dataset, hid_t memory_type, const void* values, size_t count) {
  if (count == 0) return;
  const hsize_t old_len = series_length(dataset);
  hsize_t new_len[1] = {old_len + count};
  check_status(H5Dset_extent(dataset, new_len), "extend a series");
  Handle file_space(H5Dget_space(dataset), H5Sclose, "read a dataspace");
  hsize_t start[1] = {old_len}, n[1] = {count};
  check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, n, nullptr),
               "select rows");
  Handle mem_space(H5Screate_simple(1, n, nullptr), H5Sclose, "make a dataspace");
  check_status(
      H5Dwrite(dataset, memory_type, mem_space.get(), file_space.get(), H5P_DEFAULT, values),
      "append rows");
}

void check_declared_bytes(hid_t dataset, double declared_bytes, const std::string& what) {
  constexpr double kMostRatio = 1032;
  constexpr double kSmall = 1 << 20;
  const auto stored = static_cast<double>(H5Dget_storage_size(dataset));
  if (declared_bytes > kSmall && declared_bytes > stored * kMostRatio) {
    throw core::DataError(what + " declares " + core::number_string(declared_bytes) +
                          " bytes but the file stores " + core::number_string(stored) +
                          " bytes for it: the file is damaged");
  }
}

namespace {

// The rows per chunk of a chunked dataset; 0 when it is not chunked.
size_t chunk_rows(hid_t dataset) {
  Handle plist(H5Dget_create_plist(dataset), H5Pclose, "read a dataset's creation properties");
  if (H5Pget_layout(plist.get()) != H5D_CHUNKED) return 0;
  hsize_t chunk[1] = {0};
  return H5Pget_chunk(plist.get(), 1, chunk) == 1 ? chunk[0] : 0;
}

// Rows [start, start + count) of a series into `into`; false when HDF5 cannot read them.
bool read_rows(hid_t dataset, hid_t type, size_t start, size_t count, void* into) {
  Handle file_space(H5Dget_space(dataset), H5Sclose, "read a dataspace");
  const hsize_t offset[1] = {start}, size[1] = {count};
  if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, offset, nullptr, size, nullptr) < 0) {
    return false;
  }
  Handle memory_space(H5Screate_simple(1, size, nullptr), H5Sclose, "make a dataspace");
  return H5Dread(dataset, type, memory_space.get(), file_space.get(), H5P_DEFAULT, into) >= 0;
}

// A series whole. When that fails, block by block of its chunk size: a process killed while
// a flush extended the series into a new chunk can leave that last chunk unreadable (its
// index written, not the chunk), and the rows before it are those of the flushes before, so
// they are what the series holds. A block before the last that fails is damage: an IoError.
// In the whole copy of a cut-short file (cut_short.hpp), the rows before the first chunk that
// lies past the bytes written: the zeros added are never read as values.
size_t rows_written(hid_t dataset, size_t length) {
  char name[4096] = {};
  if (H5Fget_name(dataset, name, sizeof name) <= 0) return length;
  const uint64_t written = written_bytes_of(name);
  if (written == 0 || chunk_rows(dataset) == 0) return length;
  Handle space(H5Dget_space(dataset), H5Sclose, "read a dataspace");
  hsize_t chunks = 0;
  if (H5Dget_num_chunks(dataset, space.get(), &chunks) < 0) return 0;
  for (hsize_t i = 0; i < chunks; ++i) {
    hsize_t offset[1] = {0}, size = 0;
    haddr_t address = 0;
    unsigned filters = 0;
    if (H5Dget_chunk_info(dataset, space.get(), i, offset, &filters, &address, &size) < 0 ||
        address + size > written) {
      length = std::min<size_t>(length, offset[0]);
    }
  }
  return length;
}

template <typename Value>
std::vector<Value> read_series(hid_t parent, const std::string& name, hid_t type) {
  Handle ds(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + name);
  const size_t length = rows_written(ds.get(), series_length(ds.get()));
  check_declared_bytes(ds.get(), static_cast<double>(length) * sizeof(Value), name);
  std::vector<Value> out(length);
  if (out.empty() || read_rows(ds.get(), type, 0, length, out.data())) return out;
  const size_t block = chunk_rows(ds.get());
  const size_t last_start = block == 0 ? 0 : (length - 1) / block * block;
  bool before_last_read = block > 0;
  for (size_t start = 0; before_last_read && start < last_start; start += block) {
    before_last_read = read_rows(ds.get(), type, start, block, out.data() + start);
  }
  if (!before_last_read) throw core::IoError("HDF5: cannot read dataset " + name);
  out.resize(last_start);
  return out;
}

}  // namespace

std::vector<double> read_doubles(hid_t parent, const std::string& name) {
  return read_series<double>(parent, name, H5T_NATIVE_DOUBLE);
}

std::vector<int64_t> read_ints(hid_t parent, const std::string& name) {
  return read_series<int64_t>(parent, name, H5T_NATIVE_INT64);
}

namespace {

void write_vector(hid_t parent, const std::string& name, hid_t file_type, hid_t memory_type,
                  const void* values, size_t count) {
  hsize_t dims[1] = {count};
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose, "make a dataspace");
  Handle ds(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                       H5P_DEFAULT),
            H5Dclose, "create dataset " + name);
  if (count > 0) {
    check_status(H5Dwrite(ds.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values),
                 "write dataset " + name);
  }
}

}  // namespace

void write_doubles(hid_t parent, const std::string& name, const std::vector<double>& values) {
  write_vector(parent, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data(), values.size());
}

void write_ints(hid_t parent, const std::string& name, const std::vector<int64_t>& values) {
  write_vector(parent, name, H5T_STD_I64LE, H5T_NATIVE_INT64, values.data(), values.size());
}

void write_attribute(hid_t object, const std::string& name, const Attribute& value) {
  std::visit([&](const auto& v) { write_attribute(object, name, v); }, value);
}

std::map<std::string, Attribute> read_attributes(hid_t object) {
  std::map<std::string, Attribute> out;
  H5O_info_t info{};
  check_status(H5Oget_info(object, &info), "read an object's attributes");
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    std::string name;
    {
      Handle any(
          H5Aopen_by_idx(object, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT),
          H5Aclose, "open an attribute");
      const ssize_t size = H5Aget_name(any.get(), 0, nullptr);
      name.assign(static_cast<size_t>(size > 0 ? size : 0), '\0');
      H5Aget_name(any.get(), name.size() + 1, name.data());
    }
    Handle attr = open_single_attribute(object, name);
    Handle type(H5Aget_type(attr.get()), H5Tclose, "read an attribute type");
    switch (H5Tget_class(type.get())) {
      case H5T_STRING:
        out[name] = read_string_attribute(object, name);
        break;
      case H5T_ENUM: {  // h5py's bool
        int8_t b = 0;
        auto memory = bool_type();
        check_status(H5Aread(attr.get(), memory.get(), &b), "read attribute " + name);
        out[name] = b != 0;
        break;
      }
      case H5T_INTEGER: {
        int64_t v = 0;
        check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, &v), "read attribute " + name);
        out[name] = v;
        break;
      }
      default: {
        double v = 0;
        check_status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v), "read attribute " + name);
        out[name] = v;
      }
    }
  }
  return out;
}

void link(hid_t parent, const std::string& existing, const std::string& name) {
  check_status(
      H5Lcreate_hard(parent, existing.c_str(), parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
      "link " + name + " to " + existing);
}

void remove(hid_t parent, const std::string& name) {
  if (H5Lexists(parent, name.c_str(), H5P_DEFAULT) > 0) {
    check_status(H5Ldelete(parent, name.c_str(), H5P_DEFAULT), "remove " + name);
  }
}

}  // namespace engine::io::h5
