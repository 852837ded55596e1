#include "engine/core/disk_room.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "engine/core/errors.hpp"

namespace engine::core {
namespace {

// What a file-size limit (ulimit -f) leaves a flush: the room itself is not counted against
// it (blocks allocated past the end do not change the size), the rows a flush adds are.
constexpr uint64_t kSizeLimitMargin = uint64_t{256} << 10;

}  // namespace

DiskRoom::DiskRoom(const std::string& path, uint64_t bytes)
    : fd_(::open(path.c_str(), O_WRONLY | O_CLOEXEC)), path_(path), bytes_(bytes) {
  // its own descriptor, not HDF5's: HDF5's lock on the file ends when HDF5 closes it
  try {
    renew();
  } catch (...) {
    give_back();
    throw;
  }
}

DiskRoom::~DiskRoom() {
  give_back();
}

DiskRoom::DiskRoom(DiskRoom&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      bytes_(other.bytes_),
      top_(other.top_),
      short_(other.short_) {}

DiskRoom& DiskRoom::operator=(DiskRoom&& other) noexcept {
  if (this != &other) {
    give_back();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    bytes_ = other.bytes_;
    top_ = other.top_;
    short_ = other.short_;
  }
  return *this;
}

void DiskRoom::renew() {
  if (fd_ < 0 || short_) return;
  struct stat now {};
  if (::fstat(fd_, &now) != 0) return;
  const auto size = static_cast<uint64_t>(now.st_size);
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      size + kSizeLimitMargin > static_cast<uint64_t>(limit.rlim_cur)) {
    short_ = true;
    throw IoError("cannot go on writing " + path_ + ": " + std::strerror(EFBIG) +
                  " (the file-size limit is " + std::to_string(limit.rlim_cur) + " bytes)");
  }
  if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(size), static_cast<off_t>(bytes_)) ==
      0) {
    top_ = std::max(top_, size + bytes_);
    return;
  }
  const int error = errno;
  if (error == EOPNOTSUPP || error == ENOSYS) {
    ::close(fd_);  // a file system that cannot allocate ahead: written as before, unguarded
    fd_ = -1;
    return;
  }
  short_ = true;
  throw IoError("cannot go on writing " + path_ + ": " + std::strerror(error));
}

void DiskRoom::give_back() noexcept {
  if (fd_ < 0) return;
  struct stat now {};
  if (::fstat(fd_, &now) == 0 && static_cast<uint64_t>(now.st_size) < top_) {
    const auto size = static_cast<uint64_t>(now.st_size);
    // ext4 frees blocks past the end on a truncate to the same size (and ignores a hole punched
    // there); tmpfs does the opposite
    if (::ftruncate(fd_, now.st_size) != 0) {
      // nothing to do: the room stays allocated until the file is next truncated or deleted
    }
    ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(size),
                static_cast<off_t>(top_ - size));
  }
  ::close(fd_);
  fd_ = -1;
}

}  // namespace engine::core
