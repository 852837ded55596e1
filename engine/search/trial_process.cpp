#include "engine/search/trial_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/core/errors.hpp"

namespace engine::search {
namespace {

// Between fork and exec only async-signal-safe calls.
[[noreturn]] void become_trial(const std::vector<char*>& argv, int log, pid_t search) {
  setpgid(0, 0);  // Ctrl-C reaches the search alone, which stops each trial once
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != search) _exit(1);
  dup2(log, STDOUT_FILENO);
  dup2(log, STDERR_FILENO);
  close_range(STDERR_FILENO + 1, ~0U, 0);
  execv(argv[0], argv.data());
  static const char message[] = "error: cannot start the trial's engine train\n";
  ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  _exit(127);
}

}  // namespace

TrialProcess::TrialProcess(const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    throw core::IoError("cannot write the trial's log " + log_path + ": " + std::strerror(errno));
  }
  const pid_t search = getpid();
  pid_ = fork();
  if (pid_ == 0) become_trial(argv, log, search);
  const int fork_error = errno;
  ::close(log);
  if (pid_ < 0) {
    throw core::IoError(std::string("cannot start a trial: ") + std::strerror(fork_error));
  }
}

TrialProcess::~TrialProcess() {
  if (pid_ > 0 && !exit_code_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

std::optional<int> TrialProcess::poll() {
  if (exit_code_) return exit_code_;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done != pid_) return std::nullopt;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

void TrialProcess::signal(int number) {
  if (!exit_code_) ::kill(pid_, number);
}

std::string failure_reason(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, last, error;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.rfind("error: ", 0) == 0) error = line.substr(7);
  }
  if (!error.empty()) return error;
  return last.empty() ? "it exited without a word (see " + log_path + ")" : last;
}

}  // namespace engine::search
