// A file that rank 0 reads (a checkpoint under its --out) brought to the ranks that cannot read
// it at the same path, over the process group: a job whose machines have node-local disks needs
// --out on rank 0's machine only. The ranks that can read the path use it as it is.
#pragma once

#include <string>

namespace engine::distributed {

class Group;

// A copy of a file in this machine's temporary folder, removed when this is destroyed.
class LocalCopy {
 public:
  LocalCopy() = default;
  explicit LocalCopy(std::string path) : path_(std::move(path)) {}
  ~LocalCopy();
  LocalCopy(LocalCopy&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  LocalCopy& operator=(LocalCopy&& other) noexcept;
  LocalCopy(const LocalCopy&) = delete;
  LocalCopy& operator=(const LocalCopy&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Every rank calls it with rank 0's path (the same string everywhere). Returns the path this
// rank reads: `path` when it can read it, else its copy of rank 0's bytes, kept in `copy`.
// Rank 0 failing to read the file is an IoError naming it (and the others then fail in the
// collective, naming rank 0).
std::string file_from_rank0(Group& group, const std::string& path, LocalCopy& copy);

}  // namespace engine::distributed
