// Runs one benchmark point's process (a core::ChildProcess, in a process group of its own), the
// way a sweep runs each point: its output captured (the tail kept), its address space capped,
// killed with its group when it runs past a time limit or the sweep is stopped, and how it ended
// told apart: exit code, signal or timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace engine::bench {

struct ChildOptions {
  std::vector<std::string> argv;  // argv[0] is the program's path
  // set (or replaced) in the child's environment
  std::vector<std::pair<std::string, std::string>> variables;
  double timeout_seconds = 0;    // 0: no limit
  int64_t max_memory_bytes = 0;  // RLIMIT_AS of the child; 0: no cap
  size_t output_tail_bytes = 8192;
  // Asked every 100 ms; true stops the child (its group gets SIGTERM, then SIGKILL).
  std::function<bool()> stop;
};

struct ChildResult {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false;
  bool stopped = false;
  double seconds = 0;
  std::string output;  // the tail of stdout and stderr together
};

// Throws IoError when the process cannot be started at all (no such program, no process left).
ChildResult run_child(const ChildOptions& options);

// "2G", "512M", "1.5GiB", "100000" (bytes); throws UsageError naming the flag otherwise.
int64_t parse_memory_size(const std::string& text, const char* flag);
// --max_device_memory: a fraction of the device's memory (0.5) or a size (20G) of a device of
// device_bytes, as the fraction of it the caching allocator may take; throws UsageError naming
// the flag for a fraction outside (0, 1] or a size larger than the device.
double device_memory_fraction(const std::string& text, int64_t device_bytes, const char* flag);

// A point's launcher (DLBS's runtime.launcher: "OMP_NUM_THREADS=20 numactl --localalloc
// --physcpubind=0-19") split as a shell splits it: the leading NAME=VALUE words go into the
// process's environment, the rest comes before its command. Quotes ('...', "...") keep spaces;
// a UsageError names a quote that does not close.
struct Launcher {
  std::vector<std::pair<std::string, std::string>> variables;
  std::vector<std::string> prefix;
};
Launcher parse_launcher(const std::string& text);

}  // namespace engine::bench
