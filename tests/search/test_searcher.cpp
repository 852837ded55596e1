// engine search's decisions without training anything: search spaces, grid and random trials,
// and ASHA's promotions on a synthetic objective (a known function of the hyperparameters).
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "engine/core/errors.hpp"
#include "engine/core/statuses.hpp"
#include "engine/search/searcher.hpp"

using namespace engine;
using search::Space;

namespace {

Space range(Space::Kind kind, double lo, double hi, int64_t count = 0) {
  Space s;
  s.kind = kind;
  s.lo = lo;
  s.hi = hi;
  s.count = count;
  return s;
}

double number(const io::HParam& v) {
  return std::get<double>(v);
}

search::SearchSpace objective_space() {
  search::SearchSpace space;
  space.spaces["x"] = range(Space::Kind::kUniform, -1, 2, 4);
  space.spaces["depth"] = range(Space::Kind::kInt, 1, 3);
  space.constants["epochs"] = 3.0;
  return space;
}

// The synthetic objective: best at x = 0.5, depth = 2.
double objective(const std::map<std::string, io::HParam>& hp) {
  return std::pow(number(hp.at("x")) - 0.5, 2) + std::pow(number(hp.at("depth")) - 2, 2) / 10;
}

}  // namespace

TEST_CASE("search spaces: draws stay in range, grids are evenly spaced") {
  std::mt19937_64 random(3);
  const auto log = range(Space::Kind::kLog, 1e-4, 1, 5);
  const auto integers = range(Space::Kind::kInt, 2, 4);
  std::set<double> seen;
  for (int i = 0; i < 200; ++i) {
    const double v = number(log.sample(random));
    CHECK(v >= 1e-4);
    CHECK(v <= 1);
    seen.insert(number(integers.sample(random)));
  }
  CHECK(seen == std::set<double>{2, 3, 4});  // both ends included
  const auto grid = log.grid("lr");
  REQUIRE(grid.size() == 5);
  CHECK(number(grid[0]) == doctest::Approx(1e-4));
  CHECK(number(grid[2]) == doctest::Approx(1e-2));  // evenly spaced in the exponent
  CHECK(number(grid[4]) == doctest::Approx(1));
  CHECK(integers.grid("n").size() == 3);
  CHECK_THROWS_WITH_AS(range(Space::Kind::kUniform, 0, 1).grid("momentum"),
                       doctest::Contains("'momentum' = search.uniform(0, 1) needs a count"),
                       core::UsageError);
  CHECK(log.describe() == "search.log(0.0001, 1, {count = 5})");
}

TEST_CASE("grid: every combination once, in order") {
  search::SearcherConfig config;
  config.name = "grid";
  search::Searcher searcher(config, objective_space());
  CHECK(searcher.planned_trials() == 12);
  std::vector<std::pair<double, double>> seen;
  while (auto job = searcher.next()) {
    const auto& t = searcher.trial(job->trial);
    seen.emplace_back(number(t.hparams.at("depth")), number(t.hparams.at("x")));
    CHECK(number(t.hparams.at("epochs")) == 3);  // constants ride along
    searcher.finished(*job, objective(t.hparams));
  }
  REQUIRE(seen.size() == 12);
  CHECK(seen[0] == std::make_pair(1.0, -1.0));
  CHECK(seen[1] == std::make_pair(1.0, 0.0));  // the last name (x) varies fastest
  CHECK(seen[11] == std::make_pair(3.0, 2.0));
  REQUIRE(searcher.best());
  const auto& best = searcher.trial(*searcher.best());
  CHECK(number(best.hparams.at("depth")) == 2);
  CHECK(std::abs(number(best.hparams.at("x")) - 0.5) == doctest::Approx(0.5));
  CHECK(searcher.running() == 0);
}

TEST_CASE("random: the seed decides the trials, whatever finishes first") {
  search::SearcherConfig config;
  config.name = "random";
  config.max_trials = 5;
  config.seed = 42;
  search::Searcher a(config, objective_space()), b(config, objective_space());
  std::vector<search::Job> jobs;
  while (auto job = a.next()) jobs.push_back(*job);
  CHECK(jobs.size() == 5);
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) a.finished(*it, 1.0);  // backwards
  for (int i = 0; i < 5; ++i) {
    const auto job = b.next();
    REQUIRE(job);
    b.finished(*job, 1.0);
    CHECK((b.trial(job->trial).hparams == a.trial(job->trial).hparams));
  }
  config.seed = 43;
  search::Searcher c(config, objective_space());
  const auto job = c.next();
  CHECK((c.trial(job->trial).hparams != a.trial(0).hparams));

  // shards: shard 1 of 2 starts trials 1 and 3 only, with the same draws
  config.seed = 42;
  search::Searcher shard(config, objective_space());
  shard.set_shard(1, 2);
  std::vector<int64_t> ids;
  while (auto j = shard.next()) {
    ids.push_back(j->trial);
    CHECK((shard.trial(j->trial).hparams == a.trial(j->trial).hparams));
  }
  CHECK(ids == std::vector<int64_t>{1, 3});
}

TEST_CASE("asha: the best of each rung go on, the rest stop early") {
  search::SearcherConfig config;
  config.name = "asha";
  config.max_trials = 8;
  config.max_rungs = 3;
  config.divisor = 2;
  config.max_length = 4;
  config.seed = 1;
  search::Searcher searcher(config, objective_space());
  CHECK(searcher.rung_length(0) == 1);
  CHECK(searcher.rung_length(1) == 2);
  CHECK(searcher.rung_length(2) == 4);

  // one worker: every job runs to its end before the next one starts
  std::vector<search::Job> jobs;
  while (auto job = searcher.next()) {
    jobs.push_back(*job);
    searcher.finished(*job, objective(searcher.trial(job->trial).hparams));
  }
  searcher.close();
  int64_t promotions = 0;
  for (const auto& job : jobs) promotions += job.rung > 0 ? 1 : 0;
  CHECK(jobs.size() == 8 + promotions);
  // a promotion goes to a trial at least as good as every trial it left behind in its rung
  std::map<int64_t, int64_t> reached;
  for (const auto& t : searcher.trials())
    reached[t.id] = static_cast<int64_t>(t.rung_metrics.size());
  int64_t top = 0, stopped = 0;
  for (const auto& t : searcher.trials()) {
    if (t.status == core::TrialStatus::kCompleted) ++top;
    if (t.status == core::TrialStatus::kStopped) {
      ++stopped;
      CHECK(t.reason.find("stopped early at rung") == 0);
    }
  }
  CHECK(top >= 1);
  CHECK(stopped >= 4);  // at least half stop after rung 0
  CHECK(top + stopped == 8);
  // the best trial trained the longest, and no stopped trial beats it
  const auto best = searcher.best();
  REQUIRE(best);
  CHECK(reached[*best] == 3);
  for (const auto& t : searcher.trials()) {
    CHECK_FALSE(searcher.better(objective(t.hparams), search::metric_of(searcher.trial(*best))));
  }
}

namespace {

// A random searcher of max_trials trials, seed 9.
search::SearcherConfig random_config(int64_t max_trials) {
  search::SearcherConfig config;
  config.name = "random";
  config.max_trials = max_trials;
  config.seed = 9;
  return config;
}

}  // namespace

TEST_CASE("a restored search hands out its running trials first and starts no trial twice") {
  const auto config = random_config(4);
  search::Searcher first(config, objective_space());
  const auto a = first.next(), b = first.next();
  first.finished(*a, 0.5);  // trial 0 done, trial 1 still running when the search is killed
  std::vector<search::Trial> recorded = first.trials();
  search::Searcher again(config, objective_space());
  again.restore(recorded);
  const auto resumed = again.next();
  REQUIRE(resumed);
  CHECK(resumed->trial == b->trial);
  const auto fresh = again.next();
  REQUIRE(fresh);
  CHECK(fresh->trial == 2);
  CHECK((again.trial(2).hparams != again.trial(0).hparams));
}

TEST_CASE("a trial interrupted with the search (Ctrl-C) goes on when the search is resumed") {
  const auto config = random_config(2);
  search::Searcher first(config, objective_space());
  const auto a = first.next();
  std::vector<search::Trial> recorded = first.trials();
  recorded.at(0).status = core::TrialStatus::kInterrupted;  // as the runner records it
  search::Searcher again(config, objective_space());
  again.restore(recorded);
  const auto resumed = again.next();
  REQUIRE(resumed);
  CHECK(resumed->trial == a->trial);
  CHECK(again.trial(a->trial).status == core::TrialStatus::kRunning);
}

TEST_CASE("bad searcher settings are named") {
  search::SearcherConfig config;
  config.name = "bayes";
  CHECK_THROWS_WITH_AS(search::Searcher(config, objective_space()),
                       doctest::Contains("name 'bayes' is not one of single, grid, random, asha"),
                       core::UsageError);
  config.name = "asha";
  config.max_trials = 4;
  CHECK_THROWS_WITH_AS(search::Searcher(config, objective_space()),
                       doctest::Contains("asha needs max_length >= 1"), core::UsageError);
  config.name = "random";
  config.max_trials = 0;
  CHECK_THROWS_WITH_AS(search::Searcher(config, objective_space()),
                       doctest::Contains("random needs max_trials >= 1"), core::UsageError);
  config.max_trials = 2;
  config.metric = "loss";
  CHECK_THROWS_WITH_AS(search::Searcher(config, objective_space()),
                       doctest::Contains("names no split"), core::UsageError);
  config.metric = "validation.loss";
  config.name = "asha";
  config.max_length = 4;
  search::Searcher asha(config, objective_space());
  CHECK_THROWS_WITH_AS(asha.set_shard(0, 2), doctest::Contains("--shard splits grid and random"),
                       core::UsageError);
}
