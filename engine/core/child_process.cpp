#include "engine/core/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/core/errors.hpp"
#include "engine/core/signals.hpp"

extern char** environ;

namespace engine::core {
namespace {

// Everything the child needs, made before fork: between fork and exec only async-signal-safe
// calls are allowed (no allocation, no locks).
struct Prepared {
  std::string path;
  std::vector<std::string> args, environment;
  std::vector<char*> argv, envp;
  int output_fd = -1;            // the child's stdout and stderr; -1: the engine's
  int read_end = -1;             // kPipe: the engine's end
  int exec_error[2] = {-1, -1};  // the child writes exec's errno here; closed by exec
};

void close_quietly(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::vector<std::string> child_environment(const ChildSpec& spec) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [key, value] : spec.variables) replaced |= key == name;
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [key, value] : spec.variables) out.push_back(key + "=" + value);
  return out;
}

std::string system_error(const ChildSpec& spec, const std::string& doing, int error) {
  return "cannot start " + spec.what + " (" + spec.argv[0] + "): " + doing + std::strerror(error);
}

void prepare(const ChildSpec& spec, Prepared& p) {
  if (spec.argv.empty()) throw IoError("cannot start " + spec.what + ": no program named");
  const std::string& program = spec.argv[0];
  if (program.find('/') == std::string::npos) {
    const auto found = find_program(program);
    if (!found) throw IoError("cannot start " + spec.what + ": " + program + " is not in PATH");
    p.path = *found;
  } else {
    p.path = program;
  }
  p.args = spec.argv;
  for (auto& a : p.args) p.argv.push_back(a.data());
  p.argv.push_back(nullptr);
  p.environment = child_environment(spec);
  for (auto& v : p.environment) p.envp.push_back(v.data());
  p.envp.push_back(nullptr);
  if (spec.output == ChildOutput::kFile) {
    p.output_fd = ::open(spec.output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (p.output_fd < 0) {
      throw IoError("cannot write " + spec.output_file + " (the output of " + spec.what +
                    "): " + std::strerror(errno));
    }
  } else if (spec.output == ChildOutput::kPipe) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw IoError(system_error(spec, "no pipe: ", errno));
    p.read_end = fds[0];
    p.output_fd = fds[1];
    fcntl(p.read_end, F_SETFL, fcntl(p.read_end, F_GETFL) | O_NONBLOCK);
  }
  if (pipe2(p.exec_error, O_CLOEXEC) != 0) {
    const int error = errno;
    close_quietly(p.read_end);
    close_quietly(p.output_fd);
    throw IoError(system_error(spec, "no pipe: ", error));
  }
}

[[noreturn]] void become_child(const Prepared& p, int64_t max_address_space, pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the engine died before the line above
  if (p.output_fd >= 0) {
    dup2(p.output_fd, STDOUT_FILENO);
    dup2(p.output_fd, STDERR_FILENO);
  }
  // none of the engine's descriptors but exec's error pipe, which exec itself closes
  const int keep = p.exec_error[1];
  if (keep > STDERR_FILENO + 1) close_range(STDERR_FILENO + 1, keep - 1, 0);
  close_range(keep + 1, ~0U, 0);
  if (max_address_space > 0) {
    const rlimit limit{static_cast<rlim_t>(max_address_space),
                       static_cast<rlim_t>(max_address_space)};
    setrlimit(RLIMIT_AS, &limit);
  }
  execve(p.path.c_str(), p.argv.data(), p.envp.data());
  const int error = errno;
  ssize_t ignored = write(keep, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

ChildEnd end_of(int status) {
  ChildEnd end;
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  return end;
}

}  // namespace

std::string ChildEnd::describe() const {
  if (signal != 0) return "was killed by " + signal_description(signal);
  return "exited with code " + std::to_string(exit_code);
}

ChildProcess::ChildProcess(const ChildSpec& spec) {
  Prepared p;
  prepare(spec, p);
  std::fflush(nullptr);  // nothing buffered gets written twice
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) become_child(p, spec.max_address_space, parent);
  const int fork_error = errno;
  close_quietly(p.exec_error[1]);
  close_quietly(p.output_fd);  // the child's end: the pipe ends when the child's copies close
  if (pid_ < 0) {
    close_quietly(p.exec_error[0]);
    close_quietly(p.read_end);
    throw IoError(system_error(spec, "", fork_error));
  }
  setpgid(pid_, pid_);  // as the child does: whichever runs first
  int exec_errno = 0;
  ssize_t n;
  while ((n = ::read(p.exec_error[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  close_quietly(p.exec_error[0]);
  output_ = p.read_end;
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    wait();
    close_quietly(output_);
    throw IoError(system_error(spec, "", exec_errno));
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !end_) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    wait();
  }
  close_quietly(output_);
}

bool ChildProcess::read_chunk(std::string& chunk, bool to_end) {
  char buffer[4096];
  while (output_ >= 0) {
    const ssize_t n = ::read(output_, buffer, sizeof buffer);
    if (n > 0) {
      chunk.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // EAGAIN: nothing more now; at the end, what still holds the pipe is the child's own child
    if (n < 0 && errno == EAGAIN && !to_end) return true;
    close_quietly(output_);
  }
  return false;
}

std::optional<ChildEnd> ChildProcess::poll() {
  if (end_) return end_;
  int status = 0;
  pid_t done;
  while ((done = waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (done == pid_) end_ = end_of(status);
  return end_;
}

ChildEnd ChildProcess::wait() {
  if (end_) return *end_;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  end_ = end_of(status);
  return *end_;
}

void ChildProcess::signal(int number) {
  if (!end_) ::kill(pid_, number);
}

void ChildProcess::signal_group(int number) {
  // the group may outlive its first process (a shell's background job), until it is reaped
  ::kill(-pid_, number);
}

std::optional<std::string> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0) return name;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  const std::string directories = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= directories.size()) {
    size_t end = directories.find(':', start);
    if (end == std::string::npos) end = directories.size();
    const std::string directory = end > start ? directories.substr(start, end - start) : ".";
    const std::string candidate = directory + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

std::string executable_path() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) throw IoError("cannot find this program's own path (/proc/self/exe)");
  return std::string(buffer, static_cast<size_t>(n));
}

}  // namespace engine::core
