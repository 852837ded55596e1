#include "engine/report/live_folder.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "engine/core/damaged_file_guard.hpp"
#include "engine/core/errors.hpp"
#include "engine/report/reports.hpp"

namespace engine::report {
namespace {

namespace fs = std::filesystem;

// `path` is `root` or below it (both canonical).
bool inside(const fs::path& path, const fs::path& root) {
  const auto [root_end, _] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
}

bool is_checkpoint_file(const fs::path& path) {
  return path.filename().string().rfind("ckpt-", 0) == 0;
}

std::string what_of(const std::exception& e) {
  const std::string text = e.what();
  return text.empty() ? "unreadable" : text;
}

// Reads `path` in a child process first and says why it failed ("" when it did not): HDF5
// trusts the metadata it reads, and a damaged byte can make it crash or loop for ever (see
// core/damaged_file_guard.hpp), which must end the child, never the server. Forking is safe
// here: the folder's mutex is held, so no other thread of the server is inside HDF5.
template <typename Read>
std::string failure_in_child(const std::string& path, Read&& read) {
  int message[2];
  if (::pipe(message) != 0) return "";  // no pipe: read it in the server as before
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(message[0]);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);  // the guard's own words go nowhere: the server says them
    ::dup2(null, STDERR_FILENO);
    // a read still going after a minute is a loop in damaged metadata (the server waits on it)
    ::alarm(std::min(core::read_limit_seconds(), 60u));
    try {
      read();
      ::_exit(0);
    } catch (const std::exception& e) {
      const std::string text = what_of(e);
      if (::write(message[1], text.data(), text.size()) < 0) ::_exit(3);
      ::_exit(1);
    }
  }
  ::close(message[1]);
  if (pid < 0) {
    ::close(message[0]);
    return "";
  }
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = ::read(message[0], buffer, sizeof buffer)) > 0;)
    text.append(buffer, got);
  ::close(message[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 1) return text;
  // a signal, or the damaged-file guard's exit 4
  return path + ": the file is damaged (HDF5 crashed reading it, or never ended)";
}

}  // namespace

LiveFolder::LiveFolder(const std::string& folder) : folder_(folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw core::UsageError("engine report --serve shows a folder of results; " + folder +
                           " is not a folder");
  }
  canonical_ = fs::canonical(folder, error).string();
  if (error) throw core::IoError("cannot resolve the folder " + folder + ": " + error.message());
}

std::vector<std::string> LiveFolder::scan() const {
  std::vector<std::string> found;
  const fs::path root(canonical_);
  std::error_code error;
  const auto options = fs::directory_options::skip_permission_denied;
  for (fs::recursive_directory_iterator it(root, options, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code entry_error;
    if (it->path().extension() != ".h5" || is_checkpoint_file(it->path()) ||
        !it->is_regular_file(entry_error)) {
      continue;
    }
    // a symbolic link is shown only when what it leads to is inside the folder too
    const auto target = fs::canonical(it->path(), entry_error);
    if (entry_error || !inside(target, root)) continue;
    found.push_back(it->path().lexically_relative(root).generic_string());
  }
  // a folder that went away while being walked is what it is now: an empty look
  std::sort(found.begin(), found.end());
  return found;
}

const LiveFolder::Cached& LiveFolder::read(const std::string& relative_path) {
  const std::string path = (fs::path(folder_) / relative_path).string();
  Stamp stamp;
  struct stat facts {};
  if (::stat(path.c_str(), &facts) == 0) {
    stamp.modified =
        static_cast<int64_t>(facts.st_mtim.tv_sec) * 1000000000 + facts.st_mtim.tv_nsec;
    stamp.bytes = facts.st_size;
  }
  auto& cached = cache_[relative_path];
  if (cached.entry.path == relative_path && cached.stamp == stamp && !cached.entry.kind.empty()) {
    return cached;
  }
  cached = Cached{};
  cached.stamp = stamp;
  cached.entry.path = relative_path;
  cached.entry.bytes = stamp.bytes;
  const std::string failure = failure_in_child(path, [&] { read_contents(path, cached); });
  if (!failure.empty()) {
    cached.entry = FolderEntry{relative_path, "unreadable", failure, stamp.bytes};
    return cached;
  }
  try {
    read_contents(path, cached);
  } catch (const std::exception& e) {
    cached = Cached{};
    cached.stamp = stamp;
    cached.entry = FolderEntry{relative_path, "unreadable", what_of(e), stamp.bytes};
  }
  return cached;
}

void LiveFolder::read_contents(const std::string& path, Cached& cached) {
  const std::string& relative_path = cached.entry.path;
  switch (io::result_kind(path)) {
    case io::ResultKind::kRun:
      cached.run = io::read_run_file(path);
      cached.run->path = relative_path;
      cached.entry.kind =
          cached.run->text("command").rfind("engine eval", 0) == 0 ? "evaluation" : "run";
      if (cached.run->held) cached.entry.state = "being written";
      break;
    case io::ResultKind::kBenchmark:
      cached.benchmark = io::BenchFile::read_all(path);
      cached.benchmark->path = relative_path;
      cached.entry.kind = "benchmark";
      break;
    case io::ResultKind::kSearch:
      cached.search = io::read_search_file(path);
      cached.search->path = relative_path;
      cached.entry.kind = "search";
      if (cached.search->held) cached.entry.state = "being written";
      break;
    case io::ResultKind::kCheckpoint:
    case io::ResultKind::kOther:
      cached.entry.kind = "other";
      cached.entry.state = "not a result file: no /metrics, /results or /trials (yet)";
      break;
  }
}

FolderLook LiveFolder::look() {
  std::lock_guard<std::mutex> lock(mutex_);
  FolderLook look;
  const auto paths = scan();
  std::map<std::string, Cached> kept;
  for (const auto& path : paths) {
    const Cached& cached = read(path);
    look.files.push_back(cached.entry);
    if (cached.run) look.runs.push_back(*cached.run);
    if (cached.benchmark) look.benchmarks.push_back(*cached.benchmark);
    if (cached.search) look.searches.push_back(*cached.search);
    kept.insert(cache_.extract(path));
  }
  cache_ = std::move(kept);  // files gone since the last look are forgotten
  for (const auto& search : look.searches) {
    look.runs.erase(
        std::remove_if(look.runs.begin(), look.runs.end(),
                       [&](const io::RunFile& run) { return is_trial_of(run.path, search.path); }),
        look.runs.end());
  }
  return look;
}

std::optional<io::RunFile> LiveFolder::run(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto paths = scan();
  if (!std::binary_search(paths.begin(), paths.end(), path)) return std::nullopt;
  const Cached& cached = read(path);
  if (cached.entry.kind == "unreadable") throw core::IoError(cached.entry.state);
  return cached.run;
}

std::string LiveFolder::relative(const std::string& path) const {
  if (path.empty()) return "";
  std::error_code error;
  const auto resolved = fs::weakly_canonical(path, error);
  if (error || !inside(resolved, fs::path(canonical_))) return "";
  return resolved.lexically_relative(canonical_).generic_string();
}

}  // namespace engine::report
