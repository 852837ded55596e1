#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/hdf5.hpp"
#include "engine/io/run_writer.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

// Files named with a leading dot: the staged files of a new or continued run file.
int hidden_files_in(const std::filesystem::path& folder) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    n += entry.path().filename().string()[0] == '.';
  }
  return n;
}

}  // namespace

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
    w.finish(core::FileStatus::kCompleted);
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

TEST_CASE("rows wait in memory and reach the file at the policy's bound and at checkpoints") {
  const auto dir = test::scratch_dir("runfile-flush");
  const auto path = io::RunWriter::new_run_path(dir, "flush");
  const auto train_rows = [&path] {
    auto file = io::h5::open_file_while_written(path);
    if (!io::h5::exists(file.get(), "metrics/train")) return size_t{0};
    auto train = io::h5::open_group(file.get(), "metrics/train");
    return io::h5::read_doubles(train.get(), "step").size();
  };
  io::RunWriter w(path, io::RunInfo{});
  w.set_flush_policy({3, 3600.0});
  w.append_metrics("train", 1, 0.1, 0.1, {{"loss", 3.0}});
  w.append_metrics("train", 2, 0.2, 0.2, {{"loss", 2.0}});
  CHECK(w.waiting_rows() == 2);
  CHECK(train_rows() == 0);
  w.append_metrics("train", 3, 0.3, 0.3, {{"loss", 1.0}});  // the third: all three go out
  CHECK(w.waiting_rows() == 0);
  CHECK(train_rows() == 3);

  w.append_metrics("train", 4, 0.4, 0.4, {{"loss", 0.5}});
  w.record_checkpoint(dir + "/ckpt-4.h5", 4);  // a checkpoint counts the rows: they go first
  CHECK(train_rows() == 4);

  w.set_flush_policy({1000, 0.05});
  w.append_metrics("train", 5, 0.5, 0.5, {{"loss", 0.4}});
  w.flush_if_due();
  CHECK(w.waiting_rows() == 1);  // 50 ms have not passed since the checkpoint's flush
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  w.flush_if_due();
  CHECK(w.waiting_rows() == 0);
  CHECK(train_rows() == 5);
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

TEST_CASE("a new run file appears whole: staged under a hidden name, then renamed") {
  namespace fs = std::filesystem;
  const auto dir = test::scratch_dir("runfile-staged");
  const auto path = io::RunWriter::new_run_path(dir, "staged");
  const auto folder = fs::path(path).parent_path();
  auto hidden_files = [&] { return hidden_files_in(folder); };
  CHECK(fs::file_size(path) == 0);  // the reservation
  {
    auto file = io::h5::create_staged_file(path);
    io::h5::write_attribute(file.get(), "status", std::string("running"));
    CHECK(fs::file_size(path) == 0);  // nothing at the name until published
    CHECK(hidden_files() == 1);
    io::h5::publish_staged_file(file.get(), path);
    CHECK(hidden_files() == 0);
    // readable while still open: the first contents went out with the rename
    auto reader = io::h5::open_file_while_written(path);
    CHECK(io::h5::read_string_attribute(reader.get(), "status") == "running");
  }
  CHECK_THROWS_WITH_AS(
      io::h5::create_staged_file(path),
      ("HDF5: cannot create file " + path + ": a file of that name exists").c_str(), core::IoError);
  // what a killed process left: removed by the next run in the folder once a minute old
  const auto stale = folder / ".20260101-000000.h5.1.part";
  const auto fresh = folder / ".20260101-000001.h5.2.part";
  test::write_bytes(stale.string(), {1});
  test::write_bytes(fresh.string(), {1});
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::minutes(2));
  io::RunWriter::new_run_path(dir, "staged");
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(fresh));
}

TEST_CASE("a run file continued from a checkpoint is cut back in a copy that replaces it whole") {
  namespace fs = std::filesystem;
  const auto dir = test::scratch_dir("runfile-continue");
  const auto path = io::RunWriter::new_run_path(dir, "continued");
  {
    io::RunWriter w(path, io::RunInfo{});
    for (int step = 1; step <= 4; ++step) w.append_metrics("train", step, 0.1, 0.1, {{"loss", 1}});
    w.append_metrics("validation", 4, 0.4, 0.4, {{"loss", 2}});
    w.finish(core::FileStatus::kCompleted);
  }
  const auto folder = fs::path(path).parent_path();
  auto hidden_files = [&] { return hidden_files_in(folder); };
  const auto before = core::read_file(path);
  // a checkpoint that expects more rows than the file has: nothing is changed, no copy is left
  io::RunWriter::check_continuable(path, {{"train", 4}, {"validation", 1}});
  CHECK_THROWS_AS(io::RunWriter::check_continuable(path, {{"train", 9}}), core::DataError);
  CHECK_THROWS_AS(io::RunWriter(path, {{"train", 9}}, "engine train --resume"), core::DataError);
  CHECK(core::read_file(path) == before);
  CHECK(hidden_files() == 0);
  // a reader holding the file keeps what it had; the name gets the file cut back
  auto reader = io::h5::open_file_while_written(path);
  {
    io::RunWriter w(path, {{"train", 2}}, "engine train --resume");
    w.append_metrics("train", 3, 0.3, 0.3, {{"loss", 0.5}});
    w.finish(core::FileStatus::kCompleted);
  }
  CHECK(hidden_files() == 0);
  auto old_train = io::h5::open_group(reader.get(), "metrics/train");
  CHECK(io::h5::read_doubles(old_train.get(), "step").size() == 4);
  auto file = io::h5::open_file(path, false);
  auto train = io::h5::open_group(file.get(), "metrics/train");
  CHECK(io::h5::read_doubles(train.get(), "step") == std::vector<double>{1, 2, 3});
  auto validation = io::h5::open_group(file.get(), "metrics/validation");
  CHECK(io::h5::read_doubles(validation.get(), "step").empty());  // kept none
  CHECK(io::h5::read_int_attribute(file.get(), "resumes") == 1);
}
