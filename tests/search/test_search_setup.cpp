// What engine search settles before its first trial: the shard (--shard, a job array's
// variables) and what a search file says for --resume.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "engine/core/errors.hpp"
#include "engine/search/search_setup.hpp"

using namespace engine;

namespace {

// An environment of the test's own making.
search::VariableReader variables(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> const char* {
    const auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

}  // namespace

TEST_CASE("--shard INDEX/COUNT") {
  const auto shard = search::parse_shard("2/4");
  CHECK(shard.index == 2);
  CHECK(shard.count == 4);
  for (const char* bad : {"2", "2/", "/4", "a/4", "2/4x", "2-4"}) {
    CHECK_THROWS_WITH_AS(search::parse_shard(bad), doctest::Contains("expected INDEX/COUNT"),
                         core::UsageError);
  }
}

TEST_CASE("a job array's task is a shard: Slurm's array, a Kubernetes indexed Job") {
  // Slurm: the index counted from the array's first task, the count from the array
  auto shard = search::shard_from_environment(
      std::nullopt, variables({{"SLURM_ARRAY_TASK_ID", "12"},
                               {"SLURM_ARRAY_TASK_MIN", "10"},
                               {"SLURM_ARRAY_TASK_COUNT", "4"}}));
  REQUIRE(shard);
  CHECK(shard->index == 2);
  CHECK(shard->count == 4);
  CHECK(shard->from == "SLURM_ARRAY_TASK_ID");
  // --shards overrides the array's count; an array of one task is no shard
  shard = search::shard_from_environment(8, variables({{"SLURM_ARRAY_TASK_ID", "3"}}));
  REQUIRE(shard);
  CHECK(shard->count == 8);
  CHECK_FALSE(search::shard_from_environment(
      std::nullopt, variables({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "1"}})));
  // Kubernetes: the index from JOB_COMPLETION_INDEX, the count from --shards alone
  shard = search::shard_from_environment(3, variables({{"JOB_COMPLETION_INDEX", "1"}}));
  REQUIRE(shard);
  CHECK(shard->index == 1);
  CHECK(shard->from == "JOB_COMPLETION_INDEX");
  CHECK_THROWS_WITH_AS(
      search::shard_from_environment(std::nullopt, variables({{"JOB_COMPLETION_INDEX", "1"}})),
      doctest::Contains("--shards N"), core::UsageError);
  // neither: no shard, and --shards alone is a mistake
  CHECK_FALSE(search::shard_from_environment(std::nullopt, variables({})));
  CHECK_THROWS_WITH_AS(search::shard_from_environment(4, variables({})),
                       doctest::Contains("needs a job array's index"), core::UsageError);
  CHECK_THROWS_WITH_AS(
      search::shard_from_environment(std::nullopt, variables({{"SLURM_ARRAY_TASK_ID", "x1"}})),
      doctest::Contains("SLURM_ARRAY_TASK_ID='x1' is not a whole number"), core::UsageError);
}

TEST_CASE("what a search file says about its search, for --resume") {
  io::SearchContents contents;
  contents.path = "runs/search/s.h5";
  contents.attributes["script"] = std::string("/work/cnn.lua");
  contents.attributes["overrides"] = std::string("epochs=2\nwidth=8\n");
  contents.attributes["seed"] = int64_t{7};
  contents.attributes["shard"] = int64_t{1};
  contents.attributes["shards"] = int64_t{3};
  contents.trials.resize(2);
  const auto stored = search::stored_search(contents);
  CHECK(stored.path == "runs/search/s.h5");
  CHECK(stored.script == "/work/cnn.lua");
  CHECK(stored.overrides == std::vector<std::string>{"epochs=2", "width=8"});
  CHECK(stored.seed == 7);
  CHECK(stored.shard.index == 1);
  CHECK(stored.shard.count == 3);
  CHECK(stored.trials.size() == 2);
  // a file written before shards were recorded: the whole search
  const auto old = search::stored_search(io::SearchContents{});
  CHECK(old.shard.index == 0);
  CHECK(old.shard.count == 1);
}
