#include "engine/io/cut_short.hpp"

#include <array>
#include <filesystem>
#include <fstream>

#include "engine/core/errors.hpp"

namespace engine::io::h5 {
namespace {

// At most what one interrupted flush can have been adding; a file that lacks more was damaged
// otherwise (a changed byte in its recorded end), and is left to fail as it does.
constexpr uint64_t kMostMissingBytes = uint64_t{64} << 20;

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
  return !error && recorded > size && recorded - size <= kMostMissingBytes;
}

void lengthen_to_recorded_end(const std::string& file) {
  if (!cut_short(file)) return;
  std::error_code error;
  std::filesystem::resize_file(file, recorded_end_of_file(file), error);
  if (error) throw core::IoError("cannot lengthen " + file + ": " + error.message());
}

}  // namespace engine::io::h5
