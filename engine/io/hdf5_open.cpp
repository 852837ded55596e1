// Opening HDF5 files: for writing (a file another program holds HDF5's lock on is said so),
// and for reading one a run may still be writing (hdf5.hpp).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "engine/core/errors.hpp"
#include "engine/io/cut_short.hpp"
#include "engine/io/hdf5.hpp"

namespace engine::io::h5 {

using core::IoError;

namespace {

// Whether `path` opens for reading with HDF5's file lock left out: when a write-open failed,
// the file is then whole and the lock (another process's flock on it) stood in the way.
bool held_by_another_program(const std::string& path) {
  if (::access(path.c_str(), W_OK) != 0) return false;  // not writable: the system's reason
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "make file access properties");
  if (H5Pset_file_locking(access.get(), false, true) < 0) return false;
  const hid_t unlocked = H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get());
  if (unlocked < 0) return false;
  H5Fclose(unlocked);
  return true;
}

}  // namespace

Handle open_file(const std::string& path, bool writable) {
  quiet_errors();
  const hid_t file = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0 && writable && held_by_another_program(path)) {
    throw core::UsageError(path +
                           ": another program has the file open (HDF5's own lock: h5py, "
                           "HDFView, h5dump or a reader of an older engine); close it there, "
                           "then run this again");
  }
  return Handle(file, H5Fclose, "open file " + path);
}

Handle open_file_while_written(const std::string& path) {
  quiet_errors();
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "make file access properties");
  check_status(H5Pset_file_locking(access.get(), false, true), "turn file locking off");
  const hid_t unlocked = H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get());
  if (unlocked >= 0) return Handle(unlocked, H5Fclose, "open file " + path);
  // this process itself has the file open (with the lock): HDF5 shares that file only with an
  // open that asks for the same locking
  const hid_t shared = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (shared >= 0) return Handle(shared, H5Fclose, "open file " + path);
  if (!cut_short(path)) {
    std::error_code error;
    if (recorded_end_of_file(path) > std::filesystem::file_size(path, error) && !error) {
      throw IoError(cut_short_message(path));
    }
    return Handle(shared, H5Fclose, "open file " + path);  // HDF5's reason
  }
  // killed while extending it (cut_short.hpp): a copy of our own, made whole, is read instead;
  // removed at once (the open handle keeps it until closed), the file itself left as it is
  std::error_code error;
  const std::string copy = whole_copy_name(std::filesystem::temp_directory_path().string(),
                                           std::filesystem::file_size(path, error));
  std::filesystem::copy_file(path, copy, error);
  if (error) throw IoError("cannot copy " + path + " to read it: " + error.message());
  try {
    lengthen_to_recorded_end(copy);
  } catch (const IoError&) {
    std::filesystem::remove(copy, error);
    throw;
  }
  const hid_t whole = H5Fopen(copy.c_str(), H5F_ACC_RDONLY, access.get());
  std::filesystem::remove(copy, error);
  Handle file(whole, H5Fclose, "open file " + path);
  // only a file written by flushes (a run, a sweep, a search) is cut short by a kill; any other
  // that lacks bytes (a checkpoint is written whole, then renamed) was copied in part
  if (!exists(file.get(), "metrics") && !exists(file.get(), "results") &&
      !exists(file.get(), "trials")) {
    throw IoError(cut_short_message(path));
  }
  return file;
}

bool held_by_a_writer(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the shared lock when it was taken
  return held;
}

}  // namespace engine::io::h5
