#include "engine/search/search_setup.hpp"

#include <cstdlib>

#include "engine/core/errors.hpp"

namespace engine::search {
namespace {

std::optional<int64_t> integer_variable(const VariableReader& variable, const char* name) {
  const char* text = variable(name);
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 0) {
    throw core::UsageError(std::string("the environment variable ") + name + "='" + text +
                           "' is not a whole number >= 0");
  }
  return value;
}

std::string text_attribute(const io::SearchContents& contents, const std::string& name) {
  const auto it = contents.attributes.find(name);
  if (it == contents.attributes.end()) return "";
  const auto* text = std::get_if<std::string>(&it->second);
  return text ? *text : "";
}

int64_t integer_attribute(const io::SearchContents& contents, const std::string& name,
                          int64_t fallback) {
  const auto it = contents.attributes.find(name);
  if (it == contents.attributes.end()) return fallback;
  const auto* value = std::get_if<int64_t>(&it->second);
  return value ? *value : fallback;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      size_t a = 0, b = 0;
      const int64_t index = std::stoll(text.substr(0, slash), &a);
      const int64_t count = std::stoll(text.substr(slash + 1), &b);
      if (a == slash && b == text.size() - slash - 1) return {index, count, ""};
    }
  } catch (const std::exception&) {
  }
  throw core::UsageError("--shard " + text + ": expected INDEX/COUNT, e.g. --shard 0/4");
}

std::optional<Shard> shard_from_environment(std::optional<int64_t> shards,
                                            const VariableReader& variable) {
  if (const auto task = integer_variable(variable, "SLURM_ARRAY_TASK_ID")) {
    const auto count = shards ? shards : integer_variable(variable, "SLURM_ARRAY_TASK_COUNT");
    if (count && *count > 1) {
      const int64_t first = integer_variable(variable, "SLURM_ARRAY_TASK_MIN").value_or(0);
      return Shard{*task - first, *count, "SLURM_ARRAY_TASK_ID"};
    }
  }
  if (const auto index = integer_variable(variable, "JOB_COMPLETION_INDEX")) {
    if (!shards) {
      throw core::UsageError(
          "JOB_COMPLETION_INDEX is set (a Kubernetes indexed Job): give the Job's completions "
          "with --shards N, or the shard with --shard INDEX/COUNT");
    }
    if (*shards > 1) return Shard{*index, *shards, "JOB_COMPLETION_INDEX"};
  }
  if (shards) {
    throw core::UsageError("--shards " + std::to_string(*shards) +
                           " needs a job array's index (SLURM_ARRAY_TASK_ID or "
                           "JOB_COMPLETION_INDEX); else give --shard INDEX/COUNT");
  }
  return std::nullopt;
}

StoredSearch stored_search(const io::SearchContents& contents) {
  StoredSearch s;
  s.path = contents.path;
  s.script = text_attribute(contents, "script");
  s.overrides = lines_of(text_attribute(contents, "overrides"));
  s.seed = static_cast<uint64_t>(integer_attribute(contents, "seed", 0));
  s.shard.index = integer_attribute(contents, "shard", 0);
  s.shard.count = integer_attribute(contents, "shards", 1);
  s.trials = contents.trials;
  return s;
}

std::map<std::string, io::h5::Attribute> searcher_attributes(const SearcherConfig& c) {
  return {{"name", c.name},
          {"sampler", c.sampler},
          {"metric", c.metric},
          {"smaller_is_better", c.smaller_is_better},
          {"max_trials", c.max_trials},
          {"max_rungs", c.max_rungs},
          {"divisor", c.divisor},
          {"max_length", c.max_length},
          {"unit", c.unit},
          {"max_concurrent_trials", c.max_concurrent_trials},
          {"max_restarts", c.max_restarts}};
}

}  // namespace engine::search
