// Disk space held past the end of a result file being written, so that a full disk, a quota or
// a file-size limit is met before a flush and never inside one. HDF5 drops a chunk whose write
// failed, and a later flush that succeeds leaves those rows as zeros without a word (seen with
// HDF5 1.10.8 on a full tmpfs): a flush must not start without room for everything it writes.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/errors.hpp"

namespace engine::core {

class DiskRoom {
 public:
  // Far more than one flush writes: rows wait for at most 1000 rows or 2 s (a few hundred KiB
  // even with a hundred series), a benchmark point or a search trial is a few KiB.
  static constexpr uint64_t kBytes = uint64_t{8} << 20;

  DiskRoom() = default;
  // Holds room past the end of the file at `path` (which must exist). A file system that cannot
  // allocate ahead (some network file systems) gets no room: the file is written as before.
  explicit DiskRoom(const std::string& path, uint64_t bytes = kBytes);
  ~DiskRoom();  // gives back the room left past the file's end
  DiskRoom(DiskRoom&& other) noexcept;
  DiskRoom& operator=(DiskRoom&& other) noexcept;
  DiskRoom(const DiskRoom&) = delete;
  DiskRoom& operator=(const DiskRoom&) = delete;

  // Allocates the room again past the file's end: disk blocks only, the file's size does not
  // change, so readers see nothing. The first time it cannot (the disk is full, the quota or the
  // file-size limit is reached) it throws an IoError with the system's reason; from then on it
  // does nothing, and what is left of the room takes the writer's last flushes (status failed
  // and why).
  void renew();
  // Whether renew() has failed: the file is spending what is left.
  bool short_of_space() const { return short_; }

 private:
  void give_back() noexcept;

  int fd_ = -1;
  std::string path_;
  uint64_t bytes_ = 0;
  uint64_t top_ = 0;  // the end of the room allocated last
  bool short_ = false;
};

// A writer's room for `path`: when the disk is already full (the IoError the first renew
// throws), mark_failed(reason) runs first, so that the file says failed and why, and the error
// goes on to the caller.
template <typename MarkFailed>
DiskRoom take_disk_room(const std::string& path, MarkFailed&& mark_failed) {
  try {
    return DiskRoom(path);
  } catch (const IoError& e) {
    mark_failed(std::string(e.what()));
    throw;
  }
}

}  // namespace engine::core
