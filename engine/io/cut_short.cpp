#include "engine/io/cut_short.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/core/errors.hpp"

namespace engine::io::h5 {
namespace {

constexpr uint64_t kMostMissingBytes = uint64_t{64} << 10;
constexpr const char* kWrittenMark = "-written-";

constexpr std::array<unsigned char, 8> kSignature{0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

uint64_t little_endian(const unsigned char* bytes, size_t size) {
  uint64_t value = 0;
  for (size_t i = size; i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

}  // namespace

uint64_t recorded_end_of_file(const std::string& path) {
  std::array<unsigned char, 96> head{};
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(head.data()), head.size());
  const auto got = static_cast<size_t>(in.gcount());
  if (got < 48 || !std::equal(kSignature.begin(), kSignature.end(), head.begin())) return 0;
  // the superblock's layout by version (HDF5 file format specification, "Superblock")
  const unsigned version = head[8];
  size_t offsets = 0, at = 0;
  if (version == 0 || version == 1) {
    offsets = head[13];
    at = (version == 0 ? 24 : 28) + 2 * offsets;  // after the base and free-space addresses
  } else if (version == 2 || version == 3) {
    offsets = head[9];
    at = 12 + 2 * offsets;  // after the base and superblock extension addresses
  } else {
    return 0;
  }
  if (offsets != 4 && offsets != 8) return 0;
  if (at + offsets > got) return 0;
  return little_endian(head.data() + at, offsets);
}

bool cut_short(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  const uint64_t recorded = recorded_end_of_file(path);
  return !error && recorded > size && recorded - size <= std::min(kMostMissingBytes, size / 8);
}

std::string cut_short_message(const std::string& path) {
  std::error_code error;
  return path + " is cut short: it has " + std::to_string(std::filesystem::file_size(path, error)) +
         " of the " + std::to_string(recorded_end_of_file(path)) +
         " bytes its HDF5 superblock records (a copy or download that stopped early?)";
}

std::string whole_copy_name(const std::string& folder, uint64_t written) {
  static std::atomic<int> copies{0};
  return folder + "/engine-read-" + std::to_string(::getpid()) + "-" + std::to_string(copies++) +
         kWrittenMark + std::to_string(written) + ".h5";
}

uint64_t written_bytes_of(const std::string& file_name) {
  const size_t mark = file_name.rfind(kWrittenMark);
  if (mark == std::string::npos || file_name.rfind("engine-read-") == std::string::npos) return 0;
  return std::strtoull(file_name.c_str() + mark + std::strlen(kWrittenMark), nullptr, 10);
}

void lengthen_to_recorded_end(const std::string& file) {
  if (!cut_short(file)) return;
  std::error_code error;
  std::filesystem::resize_file(file, recorded_end_of_file(file), error);
  if (error) throw core::IoError("cannot lengthen " + file + ": " + error.message());
}

}  // namespace engine::io::h5
