// The one way the engine starts another program: a benchmark point, a search trial, a --nproc
// worker, rsvg-convert. The child gets a process group of its own (Ctrl-C reaches the engine
// alone, which decides what to pass on, and the whole group can be killed), dies with the
// engine (PR_SET_PDEATHSIG), inherits no descriptor but its standard ones (an inherited one would
// hold a run file's HDF5 lock), may have its address space capped, and writes its output where
// it is told: the engine's own, a file, or a pipe the engine reads. A program that cannot be
// started is an IoError in the engine, not a child that exits 127.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace engine::core {

enum class ChildOutput {
  kInherit,  // the engine's own stdout and stderr
  kFile,     // stdout and stderr appended to output_file
  kPipe,     // stdout and stderr into a pipe; read it through ChildProcess::output()
};

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0]: a path, or a program name looked up in PATH
  std::string what;               // for messages: "a benchmark process", "rsvg-convert"
  ChildOutput output = ChildOutput::kInherit;
  std::string output_file;  // with kFile
  // Variables set (or replaced) in the child's environment, which is the engine's otherwise.
  std::vector<std::pair<std::string, std::string>> variables;
  int64_t max_address_space = 0;  // RLIMIT_AS in bytes; 0: no cap
};

// How a child ended: an exit code or a signal.
struct ChildEnd {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  // As a shell says it: the exit code, or 128 + the signal's number.
  int code() const { return signal != 0 ? 128 + signal : exit_code; }
  bool succeeded() const { return signal == 0 && exit_code == 0; }
  // "exited with code 3", "was killed by SIGKILL (killed)"
  std::string describe() const;
};

class ChildProcess {
 public:
  // Starts the program; IoError naming spec.what when it cannot (no such program, not
  // executable, no pipe or process left).
  explicit ChildProcess(const ChildSpec& spec);
  // A child still running is killed with its whole group and reaped: none outlives its owner.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The read end of the output pipe (kPipe), non-blocking; -1 otherwise or once closed.
  int output() const { return output_; }
  // Reads what the pipe holds now (to its end when `to_end`) and hands it to `sink`; closes the
  // pipe at its end. Returns false once the pipe is closed.
  template <typename Sink>
  bool read_output(Sink&& sink, bool to_end = false);

  // How it ended, without waiting; nullopt while it runs.
  std::optional<ChildEnd> poll();
  // Waits for it to end (a signal arriving meanwhile does not cut the wait short).
  ChildEnd wait();
  // To the child alone, or to its whole group; nothing once it has ended.
  void signal(int number);
  void signal_group(int number);

 private:
  bool read_chunk(std::string& chunk, bool to_end);
  pid_t pid_ = -1;
  int output_ = -1;
  std::optional<ChildEnd> end_;
};

template <typename Sink>
bool ChildProcess::read_output(Sink&& sink, bool to_end) {
  std::string chunk;
  const bool open = read_chunk(chunk, to_end);
  if (!chunk.empty()) sink(chunk);
  return open;
}

// The path of a program as execvp would find it through PATH; nullopt when there is none.
std::optional<std::string> find_program(const std::string& name);
// This program's own path (/proc/self/exe).
std::string executable_path();

}  // namespace engine::core
