#include "engine/distributed/shared_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/log.hpp"
#include "engine/distributed/group.hpp"

namespace engine::distributed {
namespace fs = std::filesystem;

namespace {

bool readable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return in.good();
}

// A file of this machine's temporary folder made for the copy (never one that was there), kept
// by `copy` from the start so that a failed write leaves nothing behind.
std::string new_local_file(const std::string& of, LocalCopy& copy) {
  std::string path =
      (fs::temp_directory_path() / ("engine-" + fs::path(of).filename().string() + "-XXXXXX"))
          .string();
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    throw core::IoError(path + ": cannot make a file for rank 0's " + of +
                        " here (this machine's temporary folder; TMPDIR chooses another)");
  }
  close(fd);
  copy = LocalCopy(path);
  return path;
}

}  // namespace

LocalCopy::~LocalCopy() {
  if (!path_.empty()) std::remove(path_.c_str());
}

LocalCopy& LocalCopy::operator=(LocalCopy&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) std::remove(path_.c_str());
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

std::string file_from_rank0(Group& group, const std::string& path, LocalCopy& copy) {
  const bool missing = !group.leader() && !readable(path);
  const auto wanted = group.sum({missing ? 1.0 : 0.0});
  if (wanted.front() == 0) return path;  // a shared disk: every rank reads it where it is
  auto size = torch::zeros({1}, torch::kInt64);
  std::vector<uint8_t> data;
  if (group.leader()) {
    data = core::read_file(path);
    size.fill_(static_cast<int64_t>(data.size()));
    core::log::info("sending {} ({} bytes) to the {} rank(s) that cannot read it", path,
                    data.size(), static_cast<int>(wanted.front()));
  }
  group.broadcast({size});
  if (!group.leader()) data.resize(static_cast<size_t>(size.item<int64_t>()));
  auto bytes = torch::from_blob(data.data(), {static_cast<int64_t>(data.size())}, torch::kUInt8);
  group.broadcast({bytes});
  if (!missing) return path;
  core::write_file(new_local_file(path, copy), data);
  core::log::debug("rank {}: {} is not on this machine; rank 0 sent it ({})", group.rank(), path,
                   copy.path());
  return copy.path();
}

}  // namespace engine::distributed
