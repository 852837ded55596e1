#include "engine/core/files.hpp"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/core/errors.hpp"

namespace engine::core {

std::vector<uint8_t> read_file(const std::string& path) {
  // a folder opens as a stream on Linux, and its "size" was allocated (std::bad_alloc)
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw DataError(path + ": is a folder, not a file");
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw IoError(path + ": cannot open");
  const auto end = in.tellg();
  if (end < 0) throw IoError(path + ": cannot read");
  const auto size = static_cast<size_t>(end);
  std::vector<uint8_t> bytes(size);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
    throw IoError(path + ": cannot read");
  }
  return bytes;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw IoError(path + ": cannot open for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw IoError(path + ": cannot write");
}

namespace {

// nftw's callback has no user pointer: the first failure's path and errno are kept here, per
// thread (FTW_DEPTH visits a folder after its contents, so a folder is removed empty).
thread_local std::string failed_path;
thread_local int failed_errno = 0;

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  if (std::remove(path) == 0) return 0;
  failed_path = path;
  failed_errno = errno;
  return 1;  // stops the walk
}

}  // namespace

bool remove_tree_quietly(const std::string& path) noexcept {
  failed_path.clear();
  failed_errno = 0;
  constexpr int kOpenFolders = 16;
  const int result = nftw(path.c_str(), remove_entry, kOpenFolders, FTW_DEPTH | FTW_PHYS);
  if (result == 0) return true;
  if (result == -1 && errno == ENOENT && failed_errno == 0) return true;  // nothing there
  if (failed_errno == 0) {
    failed_path = path;
    failed_errno = errno;
  }
  return false;
}

std::string with_folder_made(const std::string& path) {
  const auto folder = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!folder.empty()) std::filesystem::create_directories(folder, error);
  if (error) {
    throw IoError("cannot create the folder of " + path + ": " + error.message());
  }
  return path;
}

void remove_tree(const std::string& path) {
  if (!remove_tree_quietly(path)) {
    throw IoError(failed_path + ": cannot remove (" + std::strerror(failed_errno) + ")");
  }
}

}  // namespace engine::core
