#include "engine/core/run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
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

RunLock::RunLock(const std::string& run_file, const std::string& what) : path_(run_file + ".lock") {
  // a few tries: each failure of same_file means the last owner removed the file just now
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw IoError(what + ": cannot create the run's lock file " + path_ + ": " +
                    std::strerror(errno));
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const LockOwner owner = read_owner(fd);
      close(fd);
      if (error == EWOULDBLOCK) {
        throw UsageError(what + ": the run is in use by " + owner.text() + " (its lock file " +
                         path_ + "); stop that process first, or wait for it to end");
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
      throw IoError(what + ": cannot write the run's lock file " + path_ + ": " +
                    std::strerror(error));
    }
    fd_ = fd;
    return;
  }
  throw IoError(what + ": cannot take the run's lock " + path_ + " (it keeps being replaced)");
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
  if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) owner = read_owner(fd);
  } else {
    flock(fd, LOCK_UN);
  }
  close(fd);
  return owner;
}

}  // namespace engine::core
