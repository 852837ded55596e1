#include "engine/core/run_lock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "engine/core/errors.hpp"

namespace engine::core {
namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "?";
  return name;
}

LockOwner read_owner(int fd) {
  char text[512] = {};
  const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  LockOwner owner;
  if (n <= 0) return owner;
  std::istringstream in(std::string(text, static_cast<size_t>(n)));
  std::string key;
  while (in >> key) {
    if (key == "pid") in >> owner.pid;
    if (key == "host") in >> owner.host;
  }
  return owner;
}

// An fcntl lock of the whole file, held by the open file description (not the process, unlike
// F_SETLK: another open of the file in this process conflicts too) until it is closed. false
// with errno set (EAGAIN or EACCES: another holds it).
bool lock_open_file(int fd, short type) {
  struct flock whole {};
  whole.l_type = type;
  whole.l_whence = SEEK_SET;
  whole.l_start = 0;
  whole.l_len = 0;
  return fcntl(fd, F_OFD_SETLK, &whole) == 0;
}

// Whether fd is still the file at path (its owner may have removed it while we waited).
bool same_file(int fd, const std::string& path) {
  struct stat open_one {};
  struct stat named {};
  return fstat(fd, &open_one) == 0 && stat(path.c_str(), &named) == 0 &&
         open_one.st_ino == named.st_ino && open_one.st_dev == named.st_dev;
}

}  // namespace

std::string LockOwner::text() const {
  if (pid <= 0) return "another process";
  return "process " + std::to_string(pid) + (host.empty() ? "" : " on " + host);
}

RunLock::RunLock(const std::string& run_file, const std::string& what, const std::string& noun)
    : path_(run_file + ".lock") {
  // a few tries: each failure of same_file means the last owner removed the file just now
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw IoError(what + ": cannot create the " + noun + "'s lock file " + path_ + ": " +
                    std::strerror(errno));
    }
    if (!lock_open_file(fd, F_WRLCK)) {
      const int error = errno;
      const LockOwner owner = read_owner(fd);
      close(fd);
      if (error == EAGAIN || error == EACCES) {
        throw UsageError(what + ": the " + noun + " is in use by " + owner.text() +
                         " (its lock file " + path_ +
                         "); stop that process first, or wait for it to end");
      }
      throw IoError(what + ": cannot lock " + path_ + ": " + std::strerror(error));
    }
    if (!same_file(fd, path_)) {
      close(fd);
      continue;
    }
    const std::string owner = "pid " + std::to_string(getpid()) + "\nhost " + host_name() + "\n";
    if (ftruncate(fd, 0) != 0 || pwrite(fd, owner.data(), owner.size(), 0) < 0) {
      const int error = errno;
      close(fd);
      throw IoError(what + ": cannot write the " + noun + "'s lock file " + path_ + ": " +
                    std::strerror(error));
    }
    fd_ = fd;
    return;
  }
  throw IoError(what + ": cannot take the " + noun + "'s lock " + path_ +
                " (it keeps being replaced)");
}

RunLock::~RunLock() {
  if (fd_ < 0) return;
  unlink(path_.c_str());  // removed while held: a process that opened it sees it replaced
  close(fd_);
}

std::optional<LockOwner> RunLock::holder(const std::string& run_file) {
  const std::string path = run_file + ".lock";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<LockOwner> owner;
  struct flock probe {};
  probe.l_type = F_WRLCK;  // would a writer's lock be granted? (F_OFD_GETLK takes nothing)
  probe.l_whence = SEEK_SET;
  if (fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK) owner = read_owner(fd);
  close(fd);
  return owner;
}

}  // namespace engine::core
