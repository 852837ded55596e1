// A search file (HDF5_SCHEMA.md): runs/search/<name>/<time>.h5, written by engine search as
// it goes and read back by --resume and engine report. Root attributes say what was searched
// (the searcher's settings, the seed, the shard), /space the search spaces, /trials/<id> each
// trial (hyperparameters, status, rung, the metric at each rung, restarts, its run file and
// its metric series copied from it), /best the best trial so far.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/disk_room.hpp"
#include "engine/core/run_lock.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/hdf5.hpp"
#include "engine/io/hparam.hpp"
#include "engine/io/result_file.hpp"

namespace engine::io {

struct SearchTrialRecord {
  int64_t id = 0;
  std::map<std::string, HParam> hparams;
  core::TrialStatus status = core::TrialStatus::kRunning;
  int64_t rung = 0;
  std::vector<double> rung_metrics;  // the searched metric at the end of each finished rung
  int64_t restarts = 0;
  std::string run_file, reason;
  std::map<std::string, MetricSplit> metrics;  // the trial's series, from its run file
};

struct SearchInfo {
  std::string name, command, script_path, script_text;
  std::map<std::string, h5::Attribute> searcher;  // name, metric, max_trials, ... as attributes
  std::map<std::string, std::string> spaces;      // hyperparameter -> "search.log(0.001, 1)"
  std::vector<std::string> overrides;             // the search's --set, given to every trial
  uint64_t seed = 0;
  int64_t shard = 0, shards = 1;
};

struct SearchBest {
  int64_t trial = 0;
  std::string metric;
  double value = 0;
  std::map<std::string, HParam> hparams;
};

class SearchFile {
 public:
  // runs/search/<name>/<YYYYmmdd-HHMMSS>[-n].h5 under root (never reused); the trials' own run
  // files go to the folder of the same name without .h5.
  // A shard of several: <time>-shard-<i>-of-<n>.h5, so that shards started in the same second
  // on different machines never pick one name.
  static std::string new_path(const std::string& root, const std::string& name, int64_t shard = 0,
                              int64_t shards = 1);
  static std::string trials_folder(const std::string& search_file);

  SearchFile(const std::string& path, const SearchInfo& info);  // a new search
  // Reopens a search to continue it (--resume): status back to running, the resume counted.
  SearchFile(const std::string& path, const std::string& command);
  SearchFile(const SearchFile&) = delete;
  SearchFile& operator=(const SearchFile&) = delete;

  // Writes (replaces) /trials/<id> and flushes.
  void write_trial(const SearchTrialRecord& trial);
  void write_best(const SearchBest& best);
  // status: completed | failed | interrupted; sets finished_at (and error, when not empty).
  // Writes go through disk room taken before each trial (core::DiskRoom): a full disk is an
  // IoError before the trial is written, and finish uses what is left of the room.
  void finish(core::FileStatus status, const std::string& error = {});
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  // held while the file is open, taken before anything is read or written: a second --resume
  // of this search is refused naming this process, with HDF5's locking on or off
  core::RunLock lock_;
  core::DiskRoom room_;  // before file_: given back once the file is closed
  h5::Handle file_;
  h5::Handle trials_;
};

struct SearchContents {
  std::string path;
  std::map<std::string, h5::Attribute> attributes;
  std::map<std::string, std::string> spaces;
  std::vector<SearchTrialRecord> trials;  // by id
  std::optional<SearchBest> best;
  std::string script_text;
  bool held = false;  // a process on this machine is writing it now
};

// Reads a search file whole, also one a search is writing. IoError when it is not one.
SearchContents read_search_file(const std::string& path);

}  // namespace engine::io
