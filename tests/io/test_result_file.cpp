// Run files read back: every series, hyperparameters and checkpoints; the kind of a file; a
// file still being written (read without HDF5's lock) and one left "running" by a dead writer.
#include <doctest/doctest.h>

#include <fstream>

#include "engine/core/errors.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/result_file.hpp"
#include "engine/io/run_writer.hpp"
#include "tests/test_support.hpp"

using namespace engine;

TEST_CASE("a run file reads back whole, and tells a live writer from a dead one") {
  const auto dir = test::scratch_dir("result_file");
  const auto path = io::RunWriter::new_run_path(dir, "demo");
  {
    io::RunInfo info;
    info.name = "demo";
    info.script_text = "return {}";
    info.world_size = 2;
    io::RunWriter w(path, info);
    w.write_hparams({{"lr", 0.5}, {"model", std::string("mlp")}});
    w.append_metrics("train", 10, 0.5, 1.0, {{"loss", 2.0}});
    w.append_metrics("train", 20, 1.0, 2.0, {{"loss", 1.5}});
    w.record_checkpoint(dir + "/ckpt-20.h5", 20);
    // the writer holds the file: a reader sees the rows so far, and that it is running
    const auto live = io::read_run_file(path);
    CHECK(live.held);
    CHECK(live.status() == "running");
    CHECK(live.metrics.at("train").series.at("loss") == std::vector<double>{2.0, 1.5});
    w.append_metrics("validation", 20, 1.0, 2.5, {{"loss", 1.7}, {"accuracy", 0.5}});
    w.flush();
  }  // dropped without finish(), as a killed process leaves it
  const auto run = io::read_run_file(path);
  CHECK_FALSE(run.held);
  CHECK(run.text("status") == "running");
  CHECK(run.status() == "crashed or killed");
  CHECK(run.text("name") == "demo");
  CHECK(run.text("world_size") == "2");
  CHECK(run.script_text == "return {}");
  CHECK(std::get<double>(run.hparams.at("lr")) == 0.5);
  CHECK(std::get<std::string>(run.hparams.at("model")) == "mlp");
  CHECK(run.metrics.at("train").step == std::vector<int64_t>{10, 20});
  CHECK(run.metrics.at("validation").series.at("accuracy") == std::vector<double>{0.5});
  CHECK(run.checkpoints.at(dir + "/ckpt-20.h5") == 20);
  CHECK(run.latest_checkpoint == dir + "/ckpt-20.h5");
  CHECK(io::result_kind(path) == io::ResultKind::kRun);

  {
    io::RunWriter w(path, {{"train", 2}, {"validation", 1}}, "engine train --resume");
    w.finish(core::FileStatus::kCompleted);
  }
  CHECK(io::read_run_file(path).status() == "completed");
}

TEST_CASE("files that are not run files are named as what they are") {
  const auto dir = test::scratch_dir("result_kinds");
  const auto text = dir + "/notes.h5";
  std::ofstream(text) << "not HDF5";
  CHECK_THROWS_WITH_AS(io::result_kind(text), (text + " is not an HDF5 file").c_str(),
                       core::IoError);
  CHECK_THROWS_WITH_AS(io::result_kind(dir + "/missing.h5"),
                       (dir + "/missing.h5: no such file").c_str(), core::IoError);
  const auto reserved = dir + "/reserved.h5";
  std::ofstream(reserved).close();
  CHECK_THROWS_WITH_AS(
      io::result_kind(reserved),
      (reserved + " is empty: the name a run, sweep or search reserved before it stopped "
                  "(killed before it wrote its file's first contents)")
          .c_str(),
      core::IoError);
  const auto empty = dir + "/empty.h5";
  io::h5::create_file(empty);
  CHECK(io::result_kind(empty) == io::ResultKind::kOther);
  CHECK_THROWS_WITH_AS(io::read_run_file(empty),
                       (empty + " is an HDF5 file the engine did not write, not a run file (no "
                                "/metrics)")
                           .c_str(),
                       core::IoError);
}

TEST_CASE("a file of a newer format, or with a format_version that is no version, is refused") {
  const auto dir = test::scratch_dir("result-format");
  const auto path = io::RunWriter::new_run_path(dir, "versions");
  {
    io::RunWriter w(path, io::RunInfo{});
    w.append_metrics("train", 1, 0.1, 0.1, {{"loss", 1.0}});
    w.finish(core::FileStatus::kCompleted);
  }
  CHECK(io::read_run_file(path).metrics.at("train").rows() == 1);  // today's: read
  auto set_version = [&](int64_t version) {
    auto file = io::h5::open_file(path, true);
    io::h5::write_attribute(file.get(), "format_version", version);
  };
  set_version(99);
  const std::string newer = path + ": format_version 99 was written by a newer engine (engine ";
  CHECK_THROWS_WITH_AS(io::read_run_file(path), doctest::Contains(newer.c_str()), core::DataError);
  CHECK_THROWS_WITH_AS(io::read_run_file(path), doctest::Contains("this one reads up to 1"),
                       core::DataError);
  set_version(0);
  CHECK_THROWS_WITH_AS(io::read_run_file(path),
                       (path + ": format_version 0 is not a version: the file is damaged").c_str(),
                       core::DataError);
  {
    auto file = io::h5::open_file(path, true);
    H5Adelete(file.get(), "format_version");
    io::h5::write_attribute(file.get(), "format_version", std::string("one"));
  }
  CHECK_THROWS_WITH_AS(io::read_run_file(path),
                       (path + ": its format_version is not a number: the file is damaged").c_str(),
                       core::DataError);
}
