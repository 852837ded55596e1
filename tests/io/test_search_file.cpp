// A search file written as a search goes and read back whole (for --resume and engine report).
#include <doctest/doctest.h>

#include <cmath>

#include "engine/core/errors.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/search_file.hpp"
#include "tests/test_support.hpp"

using namespace engine;

TEST_CASE("a search file holds its trials, their series and the best one") {
  const auto dir = test::scratch_dir("search_file");
  const auto path = io::SearchFile::new_path(dir, "demo");
  CHECK(path.find(dir + "/search/demo/") == 0);
  CHECK(io::SearchFile::trials_folder(path) + ".h5" == path);
  io::SearchTrialRecord trial;
  trial.id = 3;
  trial.hparams = {{"lr", 0.1}, {"opt", std::string("sgd")}};
  trial.status = core::TrialStatus::kPaused;
  trial.rung = 1;
  trial.rung_metrics = {0.9, 0.5};
  trial.run_file = "runs/x.h5";
  trial.metrics["validation"].step = {10, 20};
  trial.metrics["validation"].epoch = {1, 2};
  trial.metrics["validation"].time = {0.5, 1.0};
  trial.metrics["validation"].series["loss"] = {0.9, 0.5};
  {
    io::SearchInfo info;
    info.name = "demo";
    info.searcher = {{"name", std::string("asha")},
                     {"metric", std::string("validation.loss")},
                     {"smaller_is_better", true}};
    info.spaces = {{"lr", "search.log(0.001, 1)"}};
    info.overrides = {"epochs=3"};
    info.seed = 11;
    io::SearchFile file(path, info);
    file.write_trial(trial);
    trial.status = core::TrialStatus::kCompleted;  // written again: replaced
    file.write_trial(trial);
    file.write_best({3, "validation.loss", 0.5, trial.hparams});
  }  // killed: no finish
  auto read = io::read_search_file(path);
  CHECK_FALSE(read.held);
  CHECK(std::get<std::string>(read.attributes.at("status")) == "running");
  CHECK(std::get<std::string>(read.attributes.at("searcher.name")) == "asha");
  CHECK(std::get<std::string>(read.attributes.at("overrides")) == "epochs=3");
  CHECK(std::get<int64_t>(read.attributes.at("seed")) == 11);
  CHECK(read.spaces.at("lr") == "search.log(0.001, 1)");
  REQUIRE(read.trials.size() == 1);
  const auto& t = read.trials.front();
  CHECK(t.id == 3);
  CHECK(t.status == core::TrialStatus::kCompleted);
  CHECK(t.rung == 1);
  CHECK(t.rung_metrics == std::vector<double>{0.9, 0.5});
  CHECK(std::get<std::string>(t.hparams.at("opt")) == "sgd");
  CHECK(t.metrics.at("validation").series.at("loss") == std::vector<double>{0.9, 0.5});
  REQUIRE(read.best);
  CHECK(read.best->trial == 3);
  CHECK(read.best->value == 0.5);

  {
    io::SearchFile again(path, "engine search --resume " + path);
    again.finish(core::FileStatus::kCompleted);
  }
  read = io::read_search_file(path);
  CHECK(std::get<std::string>(read.attributes.at("status")) == "completed");
  CHECK(std::get<int64_t>(read.attributes.at("resumes")) == 1);
  CHECK_THROWS_AS(io::read_search_file(dir + "/none.h5"), core::IoError);
}
