// The folder `engine report --serve` shows: which result files are in it (found again on every
// look, so that a run started a moment ago is there), each read back only when it changed, and
// the one rule of what may be served: a file the scan found inside the folder, by its path
// relative to it. Nothing outside the folder: no "..", no absolute path, no symbolic link that
// leads out, no file that is not a result file of the folder.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/bench_file.hpp"
#include "engine/io/result_file.hpp"
#include "engine/io/search_file.hpp"

namespace engine::report {

struct FolderEntry {
  std::string path;   // relative to the folder, '/' between names
  std::string kind;   // run | evaluation | benchmark | search | other | unreadable
  std::string state;  // "" when readable; "being written" (a process holds it), or why not
  int64_t bytes = 0;
};

struct FolderLook {
  std::vector<FolderEntry> files;  // every .h5 file (checkpoints aside), in path order
  std::vector<io::RunFile> runs;   // readable run files, search trials' own aside
  std::vector<io::BenchContents> benchmarks;
  std::vector<io::SearchContents> searches;
};

class LiveFolder {
 public:
  // A UsageError when `folder` is not a folder.
  explicit LiveFolder(const std::string& folder);

  const std::string& folder() const { return folder_; }

  // The folder as it is now. A file that cannot be read (damaged, cut short, being created)
  // is listed with why, never thrown.
  FolderLook look();

  // The run file the relative `path` names, read now; nullopt when the folder holds no such
  // run file (or the path leads outside it). An IoError when it is there but unreadable.
  std::optional<io::RunFile> run(const std::string& path);

  // `path` relative to the folder when it is inside it ("" otherwise): for the paths result
  // files name (a trial's run file, a checkpoint), so that the page shows and links them.
  std::string relative(const std::string& path) const;

 private:
  struct Stamp {
    int64_t modified = 0, bytes = 0;
    bool operator==(const Stamp& other) const {
      return modified == other.modified && bytes == other.bytes;
    }
  };
  struct Cached {
    Stamp stamp;
    FolderEntry entry;
    std::optional<io::RunFile> run;
    std::optional<io::BenchContents> benchmark;
    std::optional<io::SearchContents> search;
  };

  std::vector<std::string> scan() const;  // relative paths of the .h5 files inside
  const Cached& read(const std::string& path);
  // The file's contents into `cached` (its entry's path set): what read() does, in the server
  // and first in a child process.
  static void read_contents(const std::string& path, Cached& cached);

  std::string folder_;     // as given, for messages
  std::string canonical_;  // with symbolic links resolved, for the inside check
  std::mutex mutex_;       // one look or read at a time (the server answers on several threads)
  std::map<std::string, Cached> cache_;
};

}  // namespace engine::report
