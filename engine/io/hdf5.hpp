// Thin RAII layer over the HDF5 C API: handles that close themselves, and the few helpers the
// writers need (attributes, string datasets, extendable 1-D series).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace engine::io::h5 {

// Owns one HDF5 identifier and closes it with the right H5*close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer, const std::string& what);  // throws IoError if id < 0
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }
  void reset();

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// "1.10.8"
std::string library_version();

// Silences HDF5's own error printing; our exceptions say what failed.
void quiet_errors();
// " (File too large)": what the system said when HDF5's last call failed writing or reading a
// file (disk full, file-size limit), or "" when the failure was HDF5's own.
std::string system_error_suffix();
// Throws IoError("HDF5: cannot WHAT" and the system's reason) when an HDF5 call's status is
// negative.
void check_status(herr_t status, const std::string& what);
// H5Fflush, an IoError naming `path` and the system's reason when it fails.
void flush(hid_t file, const std::string& path);
// Leaves out HDF5's own clean-up at exit, which crashes on a file whose close failed (a disk
// that filled up while a checkpoint was written); every file the engine opens is closed by its
// Handle before then. Call first thing in main.
void skip_cleanup_at_exit();

Handle create_file(const std::string& path, bool overwrite = false);
// A result file that appears whole or not at all: created under a hidden name next to `path`
// (".NAME.PID.part"), written, then published: flushed and renamed to `path` (replacing the
// empty file that reserved the name). A process killed while HDF5 lays out a new file (its
// superblock first, the rest at the first flush) leaves at `path` the empty reservation, never
// a file that nothing can open. Like create_file, refuses a `path` that holds a file already.
Handle create_staged_file(const std::string& path);
void publish_staged_file(hid_t file, const std::string& path);
// An existing file changed as a whole or not at all: a copy under the staged name, opened for
// writing; publish_staged_file puts it in place of `path` (a reader holding the old file keeps
// reading it), discard_staged_copy drops it and leaves `path` as it was.
Handle open_staged_copy(const std::string& path);
void discard_staged_copy(const std::string& path) noexcept;
// Removes ".NAME.PID.part" files in `folder` older than a minute: what staging left of a
// process killed before it published (a staged file lives for milliseconds).
void remove_stale_staged_files(const std::string& folder);
// A result file's or checkpoint's format_version against the newest this engine reads: a
// DataError naming the file when it is newer (written by a newer engine) or not a version at
// all (below 1, or not an integer: damage). Files written before versions were: no attribute.
void check_format_version(hid_t root, const std::string& path, int64_t newest_readable);
Handle open_file(const std::string& path, bool writable);
// Opens a file for reading while another process may be writing it: HDF5 1.10 takes an
// exclusive lock for its writers and a default open for reading fails on it. Rows flushed
// before the open are all there.
Handle open_file_while_written(const std::string& path);
// Whether a process holds the file open for writing now (HDF5's writer lock on this machine):
// how a reader tells a run in progress from one that died with status "running".
bool held_by_a_writer(const std::string& path);
Handle create_group(hid_t parent, const std::string& name);
Handle open_group(hid_t parent, const std::string& name);
// Opens `name` under parent, creating it (and nothing above it) when missing.
Handle require_group(hid_t parent, const std::string& name);
bool exists(hid_t parent, const std::string& name);

// Variable-length UTF-8 strings, as h5py writes str.
Handle string_type();

// The enum h5py uses for numpy bools (int8 with FALSE = 0, TRUE = 1).
Handle bool_type();

void write_attribute(hid_t object, const std::string& name, const std::string& value);
void write_attribute(hid_t object, const std::string& name, double value);
void write_attribute(hid_t object, const std::string& name, int64_t value);
void write_attribute(hid_t object, const std::string& name, bool value);
std::string read_string_attribute(hid_t object, const std::string& name);

// A scalar variable-length UTF-8 string dataset.
Handle write_string_dataset(hid_t parent, const std::string& name, const std::string& value);

// A chunked, unlimited 1-D dataset of float64 or int64, created empty.
Handle create_series(hid_t parent, const std::string& name, hid_t type);
// Appends values at the end of a series created by create_series.
void append_series(hid_t dataset, hid_t memory_type, const void* values, size_t count);
size_t series_length(hid_t dataset);
// A DataError when a dataset declares far more bytes than the file stores for it, checked before
// anything is allocated for them: HDF5 can declare terabytes in a few bytes (chunks never
// written read as the fill value; one damaged byte in a dimension does it), and compression
// packs at most ~1000 bytes into one. Files the engine or h5py wrote pass. `what` names it.
void check_declared_bytes(hid_t dataset, double declared_bytes, const std::string& what);
// Cuts a series back to its first `length` values (resumed runs drop rows logged after their
// checkpoint).
void truncate_series(hid_t dataset, size_t length);
Handle open_dataset(hid_t parent, const std::string& name);
int64_t read_int_attribute(hid_t object, const std::string& name);
double read_double_attribute(hid_t object, const std::string& name);
bool has_attribute(hid_t object, const std::string& name);
std::vector<double> read_doubles(hid_t parent, const std::string& name);
std::vector<int64_t> read_ints(hid_t parent, const std::string& name);
// A whole 1-D dataset of float64 or int64 values, written at once.
void write_doubles(hid_t parent, const std::string& name, const std::vector<double>& values);
void write_ints(hid_t parent, const std::string& name, const std::vector<int64_t>& values);

// An attribute of any of the scalar kinds the engine writes (integers stay integers).
using Attribute = std::variant<bool, int64_t, double, std::string>;
void write_attribute(hid_t object, const std::string& name, const Attribute& value);
// Every attribute of an object: strings, h5py bools, integers and floats.
std::map<std::string, Attribute> read_attributes(hid_t object);
// Removes a link (a dataset or group) when it exists.
void remove(hid_t parent, const std::string& name);
// A second name for an existing object of `parent` (an HDF5 hard link: one object, stored once,
// read the same under either name).
void link(hid_t parent, const std::string& existing, const std::string& name);

}  // namespace engine::io::h5
