#include "engine/core/staged_output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "engine/core/errors.hpp"

namespace engine::core {
std::string staged_name(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path() /
          ("." + p.filename().string() + "." + std::to_string(::getpid()) + ".part"))
      .string();
}

StagedOutput::StagedOutput(const std::string& path) : path_(path), staged_(staged_name(path)) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw IoError(path + ": is a folder, not a file");
  errno = 0;
  out_.open(staged_, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!out_) {
    const int error = errno;
    throw IoError("cannot write " + path + ": " + (error ? std::strerror(error) : "cannot open"));
  }
}

StagedOutput::~StagedOutput() {
  if (published_) return;
  out_.close();
  std::remove(staged_.c_str());
}

void StagedOutput::fail(int error) {
  out_.close();
  std::remove(staged_.c_str());  // what was written goes: the file appears whole or not at all
  published_ = true;             // nothing left for the destructor
  throw IoError("cannot write " + path_ + ": " +
                (error ? std::strerror(error) : "the write failed") +
                " (nothing was written there)");
}

void StagedOutput::check() {
  const int error = errno;  // set by the write that failed, read before anything else runs
  if (!out_) fail(error);
}

void StagedOutput::publish() {
  errno = 0;
  out_.flush();
  check();
  out_.close();
  if (out_.fail()) fail(errno);
  if (std::rename(staged_.c_str(), path_.c_str()) != 0) fail(errno);
  published_ = true;
}

}  // namespace engine::core
