#include "engine/distributed/shared_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/core/errors.hpp"
#include "engine/core/log.hpp"
#include "engine/distributed/group.hpp"

namespace engine::distributed {
namespace fs = std::filesystem;

namespace {

bool readable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return in.good();
}

torch::Tensor bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::IoError(path + ": cannot be read on rank 0, which sends it to the others");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<int64_t>(in.tellg());
  in.seekg(0);
  auto bytes = torch::empty({size}, torch::kUInt8);
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data_ptr<uint8_t>()), size)) {
    throw core::IoError(path + ": reading it failed on rank 0, which sends it to the others");
  }
  return bytes;
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
  torch::Tensor bytes;
  if (group.leader()) {
    bytes = bytes_of(path);
    size.fill_(bytes.numel());
    core::log::info("sending {} ({} bytes) to the {} rank(s) that cannot read it", path,
                    bytes.numel(), static_cast<int>(wanted.front()));
  }
  group.broadcast({size});
  if (!group.leader()) bytes = torch::empty({size.item<int64_t>()}, torch::kUInt8);
  group.broadcast({bytes});
  if (!missing) return path;
  const fs::path local = fs::temp_directory_path() / ("engine-" + std::to_string(getpid()) + "-" +
                                                      fs::path(path).filename().string());
  {
    std::ofstream out(local, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data_ptr<uint8_t>()), bytes.numel());
    if (!out) {
      throw core::IoError(local.string() + ": cannot write rank 0's " + path +
                          " here (this machine's temporary folder; TMPDIR chooses another)");
    }
  }
  copy = LocalCopy(local.string());
  core::log::debug("rank {}: {} is not on this machine; rank 0 sent it ({})", group.rank(), path,
                   local.string());
  return copy.path();
}

}  // namespace engine::distributed
