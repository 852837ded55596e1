#include "engine/core/staged_output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "engine/core/errors.hpp"

namespace engine::core {
namespace {

// The longest file name the folder takes (NAME_MAX, 255 on Linux file systems).
size_t longest_name(const std::filesystem::path& folder) {
  const long most = ::pathconf(folder.empty() ? "." : folder.c_str(), _PC_NAME_MAX);
  return most > 0 ? static_cast<size_t>(most) : 255;
}

}  // namespace

std::string staged_name(const std::string& path) {
  const std::filesystem::path p(path);
  std::string name = p.filename().string();
  const std::string tail = "." + std::to_string(::getpid()) + ".part";
  // a name that fits the folder fits staged too: where ".NAME.PID.part" would be too long, NAME
  // is cut (at a character's start, not inside a UTF-8 sequence) and a hash of the whole name
  // keeps two long names with one beginning apart
  const size_t most = longest_name(p.parent_path());
  if (1 + name.size() + tail.size() > most) {
    char hash[10];
    std::snprintf(hash, sizeof hash, "~%08zx", std::hash<std::string>{}(name)&0xffffffffu);
    const size_t fixed = 1 + tail.size() + std::strlen(hash);
    size_t keep = most > fixed ? most - fixed : 0;
    while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
    name = name.substr(0, keep) + hash;
  }
  return (p.parent_path() / ("." + name + tail)).string();
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
