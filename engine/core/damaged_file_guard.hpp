// A crash inside a library while it reads a file from outside ends the command as a damaged file
// does: exit 4 naming the file, not a signal. HDF5 1.10 trusts the metadata it reads (one changed
// byte in a run file made `engine report` die with SIGSEGV inside it), and nothing the engine
// checks before a read can rule that out. A reader names the file for its whole read; a fatal
// signal while one is named prints "error: PATH: the file is damaged ..." and exits 4. Outside a
// read the signal does what it did (the process dies by it, and a crash of the engine's own code
// stays a crash).
#pragma once

#include <string>

#include "engine/core/errors.hpp"

namespace engine::core {

// Installs the handlers (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, on a stack of their own, so
// that a stack overflow is caught too), and SIGALRM's: a read that has not ended after 600 s
// (ENGINE_READ_TIMEOUT, seconds) is a loop in damaged metadata, exit 4 naming the file. Call
// first thing in main. Left out of sanitizer builds, whose own handlers report what happened.
void install_damaged_file_handlers();

// How long one file's read may take before it is taken for a loop in damaged metadata (HDF5
// 1.10 loops forever on some): far longer than reading any result file or checkpoint takes,
// 600 s. ENGINE_READ_TIMEOUT (seconds) sets it; the tests use a few seconds.
unsigned read_limit_seconds();

// Names `path` as the file being read until it goes out of scope (nests: the innermost is named).
class ReadingFile {
 public:
  explicit ReadingFile(const std::string& path);
  ~ReadingFile();
  ReadingFile(const ReadingFile&) = delete;
  ReadingFile& operator=(const ReadingFile&) = delete;
};

// read() with `path` named as the file being read, and any DataError or IoError it throws
// naming the file: a damaged byte fails some part of a read deep inside ("HDF5: cannot read
// attribute kind"), and the message must say which file is at fault.
template <typename Read>
auto reading_file(const std::string& path, Read&& read) -> decltype(read()) {
  ReadingFile reading(path);
  try {
    return read();
  } catch (const DataError& e) {
    if (std::string(e.what()).find(path) != std::string::npos) throw;
    throw DataError(path + ": " + e.what());
  } catch (const IoError& e) {
    if (std::string(e.what()).find(path) != std::string::npos) throw;
    throw IoError(path + ": " + e.what());
  }
}

}  // namespace engine::core
