// Hyperparameter importance against Optuna's (tests/fixtures/fanova.json, written by
// tests/fixtures/generate_fanova.py with Debian's python3-optuna on the trials of an engine
// search and on a made-up set).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/report/fanova.hpp"
#include "engine/report/search_importance.hpp"

using namespace engine;
using nlohmann::json;

namespace {

json fixture() {
  const char* root = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE(root != nullptr);
  std::ifstream in(std::string(root) + "/tests/fixtures/fanova.json");
  REQUIRE(in.good());
  return json::parse(in);
}

report::RegressionTree tree_of(const json& t) {
  report::RegressionTree tree;
  tree.left = t["left"].get<std::vector<int>>();
  tree.right = t["right"].get<std::vector<int>>();
  tree.feature = t["feature"].get<std::vector<int>>();
  tree.threshold = t["threshold"].get<std::vector<double>>();
  tree.value = t["value"].get<std::vector<double>>();
  return tree;
}

// The case's trials as an engine search file holds them.
io::SearchContents search_of(const json& c) {
  io::SearchContents s;
  s.attributes["searcher.metric"] = c["metric"].get<std::string>();
  s.spaces = c["spaces"].get<std::map<std::string, std::string>>();
  for (const auto& t : c["trials"]) {
    io::SearchTrialRecord trial;
    trial.id = t["id"].get<int64_t>();
    trial.status = core::TrialStatus::kCompleted;
    trial.rung_metrics = {t["metric"].get<double>()};
    for (const auto& [name, value] : t["hparams"].items()) {
      if (value.is_string()) {
        trial.hparams[name] = value.get<std::string>();
      } else {
        trial.hparams[name] = value.get<double>();
      }
    }
    s.trials.push_back(std::move(trial));
  }
  return s;
}

std::map<std::string, double> importance_by_name(const report::Table& t) {
  std::map<std::string, double> out;
  for (const auto& row : t.rows) out[std::get<std::string>(row[0])] = std::get<double>(row[1]);
  return out;
}

}  // namespace

TEST_CASE("fANOVA on sklearn's trees equals Optuna's on them") {
  const json all = fixture();
  REQUIRE(all["cases"].size() == 2);
  for (const auto& c : all["cases"]) {
    CAPTURE(c["name"].get<std::string>());
    const auto& f = c["forest"];
    std::vector<report::RegressionTree> forest;
    for (const auto& t : f["trees"]) forest.push_back(tree_of(t));
    REQUIRE(forest.size() == 64);
    std::vector<report::Bounds> bounds;
    for (const auto& b : f["bounds"]) bounds.push_back({b[0].get<double>(), b[1].get<double>()});
    const auto groups = f["groups"].get<std::vector<report::ColumnGroup>>();
    const auto got = report::fanova_importance(forest, bounds, groups);
    const auto expected = f["importance"].get<std::vector<double>>();
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i)
      CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-9));
  }
}

TEST_CASE("a search's importance agrees with Optuna's on the same trials") {
  // The forest's draws are the engine's own, so its figures are one forest's: each within four
  // of Optuna's standard deviations over 30 seeds (and 0.03) of Optuna's mean, the same order.
  const json all = fixture();
  for (const auto& c : all["cases"]) {
    CAPTURE(c["name"].get<std::string>());
    const report::Table t = report::importance_table({search_of(c)});
    REQUIRE(t.columns == std::vector<std::string>{"hyperparameter", "importance"});
    const auto got = importance_by_name(t);
    const auto names = c["hyperparameters"].get<std::vector<std::string>>();
    const auto mean = c["optuna"]["mean"].get<std::vector<double>>();
    const auto spread = c["optuna"]["std"].get<std::vector<double>>();
    REQUIRE(got.size() == names.size());
    double total = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      CAPTURE(names[i]);
      REQUIRE(got.count(names[i]) == 1);
      CHECK(std::abs(got.at(names[i]) - mean[i]) <= 4 * spread[i] + 0.03);
      total += got.at(names[i]);
    }
    CHECK(total == doctest::Approx(1.0));
    // ranked as Optuna's mean ranks them, where its seeds agree on the order
    for (size_t i = 0; i < names.size(); ++i) {
      for (size_t j = 0; j < names.size(); ++j) {
        if (mean[i] - mean[j] > 2 * (spread[i] + spread[j])) {
          CAPTURE(names[j]);
          CHECK(got.at(names[i]) > got.at(names[j]));
        }
      }
    }
    // the same trials, the same figures (the page reads them every 2 s)
    CHECK(importance_by_name(report::importance_table({search_of(c)})) == got);
  }
}

TEST_CASE("importance needs two completed trials with different metrics") {
  io::SearchContents s;
  s.attributes["searcher.metric"] = std::string("validation.loss");
  s.spaces = {{"lr", "search.log(0.001, 1)"}};
  auto trial = [](int64_t id, double lr, double metric, core::TrialStatus status) {
    io::SearchTrialRecord t;
    t.id = id;
    t.status = status;
    t.rung_metrics = {metric};
    t.hparams["lr"] = lr;
    return t;
  };
  s.trials = {trial(0, 0.01, 0.5, core::TrialStatus::kCompleted),
              trial(1, 0.1, 0.2, core::TrialStatus::kStopped)};
  report::Table t = report::importance_table({s});
  CHECK(t.rows.empty());
  CHECK(t.title.find("1 completed trial): none yet, it needs 2 completed trials or more") !=
        std::string::npos);
  s.trials.push_back(trial(2, 0.3, 0.5, core::TrialStatus::kCompleted));
  t = report::importance_table({s});
  CHECK(t.rows.empty());
  CHECK(t.title.find("none, the trials' validation.loss does not vary with them") !=
        std::string::npos);
  s.trials.push_back(trial(3, 0.5, 0.9, core::TrialStatus::kCompleted));
  t = report::importance_table({s});
  REQUIRE(t.rows.size() == 1);
  CHECK(std::get<double>(t.rows[0][1]) == doctest::Approx(1.0));
  s.spaces.clear();  // nothing searched: no table
  CHECK(report::importance_table({s}).columns.empty());
}
