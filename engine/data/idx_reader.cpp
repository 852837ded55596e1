#include "engine/data/idx_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::data {
namespace {

using core::DataError;

struct GzFileCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzFileCloser>;

// gzread reads plain files too, so one path serves both .gz and raw IDX files.
size_t read_fully(gzFile f, void* out, size_t bytes, const std::string& path) {
  size_t done = 0;
  auto* p = static_cast<char*>(out);
  while (done < bytes) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes - done, 1u << 30));
    const int n = gzread(f, p + done, chunk);
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      throw DataError(path + ": cannot decompress (" + std::string(msg ? msg : "zlib error") +
                      "); the file is corrupt or truncated");
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

uint32_t big_endian_u32(const unsigned char* b) {
  return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | uint32_t(b[3]);
}

torch::ScalarType idx_type(unsigned char code, const std::string& path) {
  switch (code) {
    case 0x08:
      return torch::kUInt8;
    case 0x09:
      return torch::kInt8;
    case 0x0B:
      return torch::kInt16;
    case 0x0C:
      return torch::kInt32;
    case 0x0D:
      return torch::kFloat32;
    case 0x0E:
      return torch::kFloat64;
  }
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", code);
  throw DataError(path + ": not an IDX file (unknown element type " + hex +
                  " in the magic number)");
}

// IDX stores big-endian; every platform libtorch supports is little-endian.
void swap_to_host_order(torch::Tensor& t) {
  const size_t width = t.element_size();
  if (width == 1) return;
  auto* p = static_cast<unsigned char*>(t.data_ptr());
  const size_t n = static_cast<size_t>(t.numel());
  for (size_t i = 0; i < n; ++i) std::reverse(p + i * width, p + (i + 1) * width);
}

}  // namespace

torch::Tensor read_idx(const std::string& path) {
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) throw DataError(path + ": cannot open (" + std::strerror(errno) + ")");
  gzbuffer(file.get(), 1 << 20);

  unsigned char magic[4];
  if (read_fully(file.get(), magic, 4, path) != 4) {
    throw DataError(path + ": truncated IDX file (shorter than its 4-byte magic number)");
  }
  if (magic[0] != 0 || magic[1] != 0) {
    throw DataError(path + ": not an IDX file (wrong magic number; expected 0x0000TTDD)");
  }
  const auto type = idx_type(magic[2], path);
  const int rank = magic[3];
  if (rank < 1) throw DataError(path + ": IDX header declares rank 0");

  std::vector<int64_t> shape(rank);
  std::vector<unsigned char> dims(4 * rank);
  if (read_fully(file.get(), dims.data(), dims.size(), path) != dims.size()) {
    throw DataError(path + ": truncated IDX file (header ends before its " + std::to_string(rank) +
                    " dimension sizes)");
  }
  for (int i = 0; i < rank; ++i) shape[i] = big_endian_u32(&dims[4 * i]);

  // Check what the header declares before allocating it: a corrupt header can ask for
  // terabytes, and a plain file's size tells at once whether the data is all there.
  const size_t element = c10::elementSize(type);
  size_t expected = element;
  for (int64_t d : shape) {
    if (d != 0 && expected > std::numeric_limits<size_t>::max() / static_cast<size_t>(d)) {
      throw DataError(path + ": IDX header declares an impossible shape " +
                      core::shape_string(shape));
    }
    expected *= static_cast<size_t>(d);
  }
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(path, ec);
  const size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (!ec && gzdirect(file.get()) && file_size < header + expected) {
    throw DataError(path + ": truncated IDX file (header declares shape " +
                    core::shape_string(shape) + ", " + std::to_string(expected) +
                    " bytes of data, but the file holds " + std::to_string(file_size - header) +
                    ")");
  }
  // deflate packs at most 1032 bytes into one, so a gzip file's size bounds what it can hold
  constexpr size_t kMostDeflateRatio = 1032;
  if (!ec && !gzdirect(file.get()) && expected / kMostDeflateRatio > file_size) {
    throw DataError(path + ": IDX header declares shape " + core::shape_string(shape) + " (" +
                    std::to_string(expected) + " bytes of data), more than a gzip file of " +
                    std::to_string(file_size) + " bytes can hold (corrupt header?)");
  }
  torch::Tensor tensor;
  try {
    tensor = torch::empty(shape, torch::TensorOptions().dtype(type));
  } catch (const std::exception&) {  // c10::Error or std::bad_alloc
    throw DataError(path + ": IDX header declares shape " + core::shape_string(shape) + " (" +
                    std::to_string(expected) + " bytes), more than this machine can allocate");
  }
  const size_t got = read_fully(file.get(), tensor.data_ptr(), expected, path);
  if (got != expected) {
    throw DataError(path + ": truncated IDX file (header declares shape " +
                    core::shape_string(shape) + ", " + std::to_string(expected) +
                    " bytes of data, but the file holds " + std::to_string(got) + ")");
  }
  unsigned char extra;
  if (read_fully(file.get(), &extra, 1, path) != 0) {
    throw DataError(path + ": IDX file is longer than its header declares (shape " +
                    core::shape_string(shape) + ")");
  }
  swap_to_host_order(tensor);
  return tensor;
}

}  // namespace engine::data
