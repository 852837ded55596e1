// Helpers shared by the doctest suites: scratch folders and tiny files written at test time.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/core/files.hpp"

namespace engine::test {

// A fresh empty folder for one test, under $ENGINE_TEST_TMP (set by CTest) or /tmp.
inline std::string scratch_dir(const std::string& name) {
  const char* root = std::getenv("ENGINE_TEST_TMP");
  const std::filesystem::path dir = std::filesystem::path(root ? root : "/tmp") /
                                    ("engine-" + name + "-" + std::to_string(getpid()));
  core::remove_tree(dir.string());
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes,
                        bool gzip = false) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
    return;
  }
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// An IDX file of unsigned bytes: magic 0x00000800 + rank, big-endian sizes, then data.
inline std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& shape,
                                      const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = {0, 0, 0x08, static_cast<uint8_t>(shape.size())};
  for (uint32_t d : shape) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(d >> s));
  }
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// A small MNIST-shaped dataset: `count` images of 28x28 whose pixels encode their index, and
// labels index % 10.
inline void write_mnist(const std::string& dir, const std::string& prefix, uint32_t count,
                        bool gzip = true) {
  std::vector<uint8_t> images(count * 28 * 28), labels(count);
  for (uint32_t i = 0; i < count; ++i) {
    labels[i] = static_cast<uint8_t>(i % 10);
    for (uint32_t p = 0; p < 28 * 28; ++p)
      images[i * 784 + p] = static_cast<uint8_t>((i * 7 + p) % 256);
  }
  const std::string ext = gzip ? ".gz" : "";
  write_bytes(dir + "/" + prefix + "-images-idx3-ubyte" + ext, idx_bytes({count, 28, 28}, images),
              gzip);
  write_bytes(dir + "/" + prefix + "-labels-idx1-ubyte" + ext, idx_bytes({count}, labels), gzip);
}

}  // namespace engine::test
