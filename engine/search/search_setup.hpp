// What `engine search` settles before its first trial, out of the command line's reach so that
// unit tests reach it: which shard of the trials this process runs (--shard, or a job array's
// variables), and what a search file says about the search that wrote it (--resume).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/search_file.hpp"
#include "engine/search/searcher.hpp"

namespace engine::search {

struct Shard {
  int64_t index = 0;
  int64_t count = 1;
  std::string from;  // the variable it came from ("SLURM_ARRAY_TASK_ID"); "" for --shard
};

// "--shard 2/4"; UsageError naming the flag otherwise.
Shard parse_shard(const std::string& text);

// A job array's task as a shard: Slurm's array (index from SLURM_ARRAY_TASK_MIN, count
// SLURM_ARRAY_TASK_COUNT unless --shards gives it), or a Kubernetes indexed Job
// (JOB_COMPLETION_INDEX, the count from --shards, the Job's completions). nullopt when neither
// is set (or the array has one task). UsageError for --shards without an index, an index
// without a count, or a variable that is not a whole number. `variable` reads the environment
// (std::getenv unless a test gives another).
using VariableReader = std::function<const char*(const char*)>;
std::optional<Shard> shard_from_environment(std::optional<int64_t> shards,
                                            const VariableReader& variable);

// What a search file records of its search, for --resume: the script, its --set, the seed,
// the shard and the trials so far.
struct StoredSearch {
  std::string path;
  std::string script;
  std::vector<std::string> overrides;
  uint64_t seed = 0;
  Shard shard;
  std::vector<io::SearchTrialRecord> trials;
};
StoredSearch stored_search(const io::SearchContents& contents);

// The searcher's settings as the search file's attributes.
std::map<std::string, io::h5::Attribute> searcher_attributes(const SearcherConfig& config);

}  // namespace engine::search
