// One trial's `engine train` as a child process of the search: its output goes to a log file,
// it dies with the search (PR_SET_PDEATHSIG) and inherits none of the search's files.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace engine::search {

class TrialProcess {
 public:
  // Starts argv (argv[0] is the program's path); IoError when it cannot.
  TrialProcess(const std::vector<std::string>& argv, const std::string& log_path);
  ~TrialProcess();  // kills a child still running, and reaps it
  TrialProcess(const TrialProcess&) = delete;
  TrialProcess& operator=(const TrialProcess&) = delete;

  // The exit code once it ended (128 + N after signal N), without waiting; nullopt meanwhile.
  std::optional<int> poll();
  void signal(int number);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// The reason a failed trial gives: the last "error: ..." line of its log (else its last line).
std::string failure_reason(const std::string& log_path);

}  // namespace engine::search
