// One owner per result file (a run, a sweep, a search): a lock file beside it, held by the
// process that writes it for its whole life, naming that process (PID and host) for whoever
// finds it taken. The lock is an fcntl lock of the open file description (F_OFD_SETLK): the
// kernel drops it when the holder dies, and NFS forwards it to the server, so it holds across
// machines where HDF5's own lock is off (HDF5_USE_FILE_LOCKING=FALSE) or not honoured.
#pragma once

#include <optional>
#include <string>

namespace engine::core {

// Who holds a run's lock, as its lock file says.
struct LockOwner {
  long pid = 0;
  std::string host;
  std::string text() const;  // "process 1234 on node7"
};

class RunLock {
 public:
  // Takes the lock of `run_file` (its lock file is run_file + ".lock"). UsageError naming the
  // owner when another live process holds it ("WHAT: the NOUN is in use by process 12 on
  // node7"); IoError when the lock file cannot be made. A lock file left by a process that died
  // (a crash, SIGKILL) is not held: the kernel released it, and it is taken over.
  RunLock(const std::string& run_file, const std::string& what, const std::string& noun = "run");
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  const std::string& path() const { return path_; }

  // The owner of `run_file`'s lock while a live process holds it; nullopt when nobody does.
  static std::optional<LockOwner> holder(const std::string& run_file);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace engine::core
