// A file written under a hidden name beside its place and renamed into it once whole: a command
// that fails half-way (a full disk, an error in the script) leaves no half-written file, and a
// file already at the place is replaced only by a complete one.
#pragma once

#include <fstream>
#include <string>

namespace engine::core {

// ".NAME.PID.part" beside `path`: where a file is written before it is renamed into its place
// (result files and checkpoints too, io/hdf5.hpp), and what remove_stale_staged_files looks for.
// Never longer than the longest name the folder takes: a long NAME is cut and hashed
// (".NAME-START~HASH.PID.part"), so any name that can be published can be staged.
std::string staged_name(const std::string& path);

class StagedOutput {
 public:
  // Opens ".NAME.PID.part" beside `path`; IoError with the system's reason when it cannot.
  explicit StagedOutput(const std::string& path);
  ~StagedOutput();  // removes the hidden file unless published
  StagedOutput(const StagedOutput&) = delete;
  StagedOutput& operator=(const StagedOutput&) = delete;

  std::ostream& stream() { return out_; }
  // An IoError naming the file and the system's reason (No space left on device) when a write
  // since the last check failed. Call after each batch of writes.
  void check();
  // Flushes, closes and renames the file into its place (checked at each step).
  void publish();
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(int error);

  std::string path_, staged_;
  std::ofstream out_;
  bool published_ = false;
};

}  // namespace engine::core
