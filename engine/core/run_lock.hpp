// One owner per run: a lock file beside the run file, held by the process that writes the run
// for its whole life, naming that process (PID and host) for whoever finds it taken.
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
  // owner when another live process holds it; IoError when the lock file cannot be made. A lock
  // file left by a process that died (a crash, SIGKILL) is not held: the kernel released it.
  explicit RunLock(const std::string& run_file, const std::string& what);
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
