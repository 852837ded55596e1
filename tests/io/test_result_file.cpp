// Run files read back: every series, hyperparameters and checkpoints; the kind of a file; a
// file still being written (read without HDF5's lock) and one left "running" by a dead writer.
#include <doctest/doctest.h>

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "engine/core/errors.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/cut_short.hpp"
#include "engine/io/result_file.hpp"
#include "engine/io/run_writer.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

// tests/fixtures/NAME.gz unpacked into a fresh scratch folder; its path there.
std::string unpacked_fixture(const std::string& name) {
  const char* source = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const auto path = test::scratch_dir(name) + "/" + name;
  gzFile in = gzopen((std::string(source) + "/tests/fixtures/" + name + ".gz").c_str(), "rb");
  REQUIRE(in != nullptr);
  std::ofstream out(path, std::ios::binary);
  char buffer[65536];
  for (int got; (got = gzread(in, buffer, sizeof buffer)) > 0;) out.write(buffer, got);
  gzclose(in);
  return path;
}

}  // namespace

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

TEST_CASE("a run killed while a flush extended its series into a new chunk reads up to it") {
  // tests/fixtures/killed_mid_flush.h5.gz: the run file cli.crash_kill left on 2026-11-27 when
  // a SIGKILL landed inside a flush; the last chunk of /metrics/train/epoch and step (rows
  // 3328-3339) is indexed but unreadable, and h5dump fails on it. The rows before it are
  // those of the flushes before the kill.
  const auto path = unpacked_fixture("killed_mid_flush.h5");
  const auto dir = std::filesystem::path(path).parent_path().string();
  const auto run = io::read_run_file(path);
  CHECK(run.status() == "crashed or killed");
  const auto& train = run.metrics.at("train");
  CHECK(train.rows() == 3328);
  CHECK(train.series.at("loss").size() == 3328);
  CHECK(train.step.back() > train.step.front());
  CHECK(run.metrics.at("validation").rows() == 332);

  // the same file cut at byte 263,000, where the chunk of train/loss rows 3072-3327 starts:
  // read through a copy lengthened with zeros, whose rows there are never taken for values
  const auto shorter = dir + "/shorter.h5";
  std::filesystem::copy_file(path, shorter);
  std::filesystem::resize_file(shorter, 263000);
  REQUIRE(io::h5::cut_short(shorter));
  const auto cut = io::read_run_file(shorter);
  CHECK(cut.metrics.at("train").rows() == 3072);
  const auto& loss = cut.metrics.at("train").series.at("loss");
  CHECK(std::all_of(loss.begin(), loss.end(), [](double v) { return v > 0; }));
  CHECK(cut.metrics.at("validation").rows() == 332);

  // resumed from a checkpoint before the kill: the unreadable chunk is cut away with the rows
  // after the checkpoint, and the file reads whole again
  {
    io::RunWriter resumed(path, {{"train", 3000}, {"validation", 300}, {"data", 120}},
                          "engine train --resume");
    resumed.append_metrics("train", train.step[2999] + 1, 1.0, 1.0, {{"loss", 0.5}});
    resumed.finish(core::FileStatus::kCompleted);
  }
  const auto whole = io::read_run_file(path);
  CHECK(whole.metrics.at("train").rows() == 3001);
  CHECK(whole.metrics.at("train").step[3000] == train.step[2999] + 1);
  CHECK(whole.metrics.at("validation").rows() == 300);
}

TEST_CASE("rows a killed flush sized but never wrote (HDF5's fill value) are not read as logged") {
  const auto dir = test::scratch_dir("fill_rows");
  const auto path = io::RunWriter::new_run_path(dir, "demo");
  {
    io::RunInfo info;
    info.name = "demo";
    io::RunWriter w(path, info);
    for (int step = 1; step <= 3; ++step)
      w.append_metrics("train", step * 10, step, step, {{"loss", 1.0}});
    w.finish(core::FileStatus::kCompleted);
  }
  {  // what the kill left: every series of the split extended by 5 rows, none written
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(file >= 0);
    for (const char* name : {"step", "epoch", "time", "loss"}) {
      const hid_t dataset =
          H5Dopen2(file, (std::string("/metrics/train/") + name).c_str(), H5P_DEFAULT);
      const hsize_t rows[1] = {8};
      CHECK(H5Dset_extent(dataset, rows) >= 0);
      H5Dclose(dataset);
    }
    H5Fclose(file);
  }
  const auto run = io::read_run_file(path);
  const auto& train = run.metrics.at("train");
  CHECK(train.rows() == 3);
  CHECK(train.step == std::vector<int64_t>{10, 20, 30});
}

TEST_CASE(
    "a run file killed while HDF5 extended it opens and resumes; reading leaves it as it is") {
  // tests/fixtures/killed_extending.h5.gz: the run file cli.resume_identity left on 2026-11-27
  // when its SIGKILL landed as a flush extended the file: 120,272 bytes where its superblock
  // says 120,408, which HDF5 1.10 refuses to open ("truncated file")
  const auto path = unpacked_fixture("killed_extending.h5");
  const auto dir = std::filesystem::path(path).parent_path().string();
  const auto before = test::read_text(path);
  REQUIRE(io::h5::cut_short(path));
  CHECK(io::h5::recorded_end_of_file(path) == 120408);

  const auto run = io::read_run_file(path);
  CHECK(run.status() == "crashed or killed");
  CHECK(run.metrics.at("train").step == std::vector<int64_t>{3, 6, 7});
  CHECK(run.metrics.at("validation").step == std::vector<int64_t>{5});
  CHECK(test::read_text(path) == before);  // read through a copy of its own

  // a recorded end far past the file is damage, not a flush cut short: refused as before
  const auto damaged = dir + "/damaged.h5";
  std::filesystem::copy_file(path, damaged);
  {
    std::fstream bytes(damaged, std::ios::in | std::ios::out | std::ios::binary);
    bytes.seekp(47);  // the high byte of the end of file (superblock version 0, 8-byte offsets)
    bytes.put(static_cast<char>(0x10));
  }
  CHECK_FALSE(io::h5::cut_short(damaged));
  CHECK_THROWS_AS(io::read_run_file(damaged), core::IoError);

  // a file that lacks more than a flush leaves, or that flushes did not write (here a bare
  // dataset, as a checkpoint is), was copied in part: named so, not read padded
  const auto partial = dir + "/partial.h5";
  {
    const hid_t file = H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    io::h5::write_doubles(file, "weights", std::vector<double>(20000, 0.5));
    H5Fclose(file);
  }
  std::filesystem::resize_file(partial, 3000);
  CHECK_FALSE(io::h5::cut_short(partial));  // far more missing than a flush leaves
  CHECK_THROWS_WITH_AS(io::result_kind(partial), doctest::Contains("partial.h5 is cut short"),
                       core::IoError);

  // resumed from a checkpoint at step 6: the staged copy is made whole, then cut to its rows
  {
    io::RunWriter resumed(path, {{"train", 2}, {"validation", 1}}, "engine train --resume");
    resumed.append_metrics("train", 9, 1.0, 1.0, {{"loss", 0.5}});
    resumed.finish(core::FileStatus::kCompleted);
  }
  CHECK_FALSE(io::h5::cut_short(path));
  const auto whole = io::read_run_file(path);
  CHECK(whole.status() == "completed");
  CHECK(whole.metrics.at("train").step == std::vector<int64_t>{3, 6, 9});
}
