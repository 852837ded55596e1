#include <doctest/doctest.h>

#include <cmath>

#include "engine/core/errors.hpp"
#include "engine/io/run_writer.hpp"
#include "tests/test_support.hpp"

using namespace engine;

TEST_CASE("a run file holds attributes, script, hparams and metric series") {
  const auto dir = test::scratch_dir("runfile");
  const auto path = io::RunWriter::new_run_path(dir, "demo");
  CHECK(path.find(dir + "/demo/") == 0);
  {
    io::RunInfo info;
    info.name = "demo";
    info.script_text = "return {}";
    info.seed = 42;
    io::RunWriter w(path, info);
    w.write_hparams({{"lr", 0.5}, {"name", std::string("x")}, {"flag", true}});
    w.append_metrics("train", 10, 0.5, 1.0, {{"loss", 2.0}});
    w.append_metrics("train", 20, 1.0, 2.0, {{"loss", 1.5}, {"accuracy", 0.25}});
    w.append_metrics("validation", 20, 1.0, 2.5, {{"loss", 1.7}});
    w.finish("completed");
  }
  auto file = io::h5::open_file(path, false);
  CHECK(io::h5::read_string_attribute(file.get(), "status") == "completed");
  CHECK(io::h5::read_string_attribute(file.get(), "name") == "demo");
  CHECK(io::h5::exists(file.get(), "script"));
  auto train = io::h5::open_group(file.get(), "metrics/train");
  CHECK(io::h5::read_doubles(train.get(), "loss") == std::vector<double>{2.0, 1.5});
  CHECK(io::h5::read_doubles(train.get(), "step") == std::vector<double>{10, 20});
  auto accuracy = io::h5::read_doubles(train.get(), "accuracy");  // first seen on row 2
  REQUIRE(accuracy.size() == 2);
  CHECK(std::isnan(accuracy[0]));
  CHECK(accuracy[1] == 0.25);
  auto validation = io::h5::open_group(file.get(), "metrics/validation");
  CHECK(io::h5::read_doubles(validation.get(), "time") == std::vector<double>{2.5});
}

TEST_CASE("a writer that never finishes leaves a readable file marked running") {
  const auto dir = test::scratch_dir("runfile-crash");
  const auto path = io::RunWriter::new_run_path(dir, "crash");
  {
    io::RunWriter w(path, io::RunInfo{});
    w.append_metrics("train", 1, 0.1, 0.1, {{"loss", 3.0}});
  }
  auto file = io::h5::open_file(path, false);
  CHECK(io::h5::read_string_attribute(file.get(), "status") == "running");
  auto train = io::h5::open_group(file.get(), "metrics/train");
  CHECK(io::h5::read_doubles(train.get(), "loss") == std::vector<double>{3.0});
}

TEST_CASE("run paths are never reused and unwritable folders say so") {
  const auto dir = test::scratch_dir("runfile-paths");
  const auto a = io::RunWriter::new_run_path(dir, "same");
  { io::RunWriter w(a, io::RunInfo{}); }
  CHECK(io::RunWriter::new_run_path(dir, "same") != a);
  test::write_bytes(dir + "/blocker", {1});
  CHECK_THROWS_AS(io::RunWriter::new_run_path(dir + "/blocker", "x"), core::IoError);
  CHECK_THROWS_AS(io::RunWriter(a, io::RunInfo{}), core::IoError);  // exists already
}
