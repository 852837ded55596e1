// The few kinds of error the engine raises, each with the exit code `cli` maps it to.
#pragma once

#include <stdexcept>
#include <string>

namespace engine::core {

// Base of every expected error: something the user can fix. Anything else is a bug.
// Every exit code the engine ends with, in one place (docs/cli.md's table): what each error
// class below returns, and what main() and the signal handlers return themselves. A process
// ended by a signal the engine handled exits 128 + the signal (Interrupted).
enum ExitCode : int {
  kExitBug = 1,          // anything that is not an engine::core::Error: a bug
  kExitUsage = 2,        // a command line or a call that cannot work
  kExitScript = 3,       // the user's script
  kExitData = 4,         // a dataset, checkpoint or result file (damaged ones too)
  kExitIo = 5,           // the file system refused (full, a quota, a limit)
  kExitTraining = 6,     // training that cannot go on (a non-finite loss)
  kExitOutOfMemory = 7,  // memory ran out, wherever
  kExitDistributed = 8,  // a distributed run's group failed
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual int exit_code() const = 0;
  virtual const char* kind() const = 0;
};

// Bad flags, options or arguments.
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitUsage; }
  const char* kind() const override { return "usage error"; }
};

// An error raised in or by a Lua script; carries the Lua traceback when there is one. An
// engine error that crossed a script on its way up (a DataError raised by data.mnist called
// from the script) keeps its own exit code.
class ScriptError : public Error {
 public:
  explicit ScriptError(const std::string& message, std::string traceback = {},
                       int exit_code = kExitScript)
      : Error(message), traceback_(std::move(traceback)), exit_code_(exit_code) {}
  int exit_code() const override { return exit_code_; }
  const char* kind() const override { return "script error"; }
  const std::string& traceback() const { return traceback_; }

 private:
  std::string traceback_;
  int exit_code_;
};

// A dataset or checkpoint that cannot be read as declared.
class DataError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitData; }
  const char* kind() const override { return "data error"; }
};

// The file system refused.
class IoError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitIo; }
  const char* kind() const override { return "I/O error"; }
};

// Training that cannot go on: a NaN or infinite loss (with on_nan = 'error').
class TrainingError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitTraining; }
  const char* kind() const override { return "training error"; }
};

// Memory ran out where the engine can say where (a layer's forward): exit 7, as libtorch's own
// out-of-memory errors and std::bad_alloc that reach main().
class OutOfMemory : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitOutOfMemory; }
  const char* kind() const override { return "out of memory"; }
};

// The run was stopped by SIGINT or SIGTERM after saving a checkpoint; exits 128 + the signal,
// as a shell reports a process killed by it.
class Interrupted : public Error {
 public:
  Interrupted(const std::string& message, int signal) : Error(message), signal_(signal) {}
  int exit_code() const override { return 128 + signal_; }
  const char* kind() const override { return "interrupted"; }

 private:
  int signal_;
};

// Exit code for anything that is not an engine::core::Error: a bug.
inline constexpr int kBugExitCode = kExitBug;

// The message of an exception without libtorch's C++ backtrace (c10::Error carries one).
std::string describe_exception(const std::exception& e);

}  // namespace engine::core
