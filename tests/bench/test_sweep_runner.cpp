// The sweep runner and its child processes: exit codes, signals, timeouts and memory caps of
// real processes; out-of-memory skips, resuming and reruns through a benchmark file.
#include <doctest/doctest.h>

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/bench/parameters.hpp"
#include "engine/bench/point_process.hpp"
#include "engine/bench/sweep_runner.hpp"
#include "engine/bench/sweep_tables.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/signals.hpp"
#include "engine/core/statuses.hpp"
#include "tests/test_support.hpp"

using namespace engine;
using bench::Value;

TEST_CASE("child processes: exit codes, output tails, signals, timeouts, memory caps") {
  bench::ChildOptions o;
  o.argv = {"/bin/sh", "-c", "echo hello; echo oops >&2; exit 3"};
  auto r = bench::run_child(o);
  CHECK(r.exit_code == 3);
  CHECK(r.signal == 0);
  CHECK(r.output.find("hello") != std::string::npos);
  CHECK(r.output.find("oops") != std::string::npos);

  o.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  r = bench::run_child(o);
  CHECK(r.signal == SIGSEGV);
  CHECK(core::signal_description(SIGSEGV).find("SIGSEGV") != std::string::npos);

  // the whole group goes: the background sleep would otherwise hold the pipe open
  o.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30"};
  o.timeout_seconds = 0.3;
  r = bench::run_child(o);
  CHECK(r.timed_out);
  CHECK(r.seconds < 10);

  o.timeout_seconds = 0;
  o.output_tail_bytes = 100;
  o.argv = {"/bin/sh", "-c", "i=0; while [ $i -lt 200 ]; do echo line$i; i=$((i+1)); done"};
  r = bench::run_child(o);
  CHECK(r.output.size() <= 100);
  CHECK(r.output.find("line199") != std::string::npos);

  // a capped address space makes a large allocation fail in the child
  o.max_memory_bytes = 64 << 20;
  o.argv = {"/bin/sh", "-c", "head -c 200000000 /dev/zero | tr '\\0' a | sort > /dev/null"};
  r = bench::run_child(o);
  CHECK(r.exit_code != 0);

  // a program that cannot start is the sweep's error, named, not a point that exits 127
  o.argv = {"/nonexistent/program"};
  o.max_memory_bytes = 0;
  CHECK_THROWS_WITH_AS(bench::run_child(o),
                       doctest::Contains("cannot start a benchmark process (/nonexistent/program)"),
                       core::IoError);
}

TEST_CASE("memory sizes and failure kinds") {
  CHECK(bench::parse_memory_size("2G", "--max_memory") == int64_t{2} << 30);
  CHECK(bench::parse_memory_size("512M", "--max_memory") == int64_t{512} << 20);
  CHECK(bench::parse_memory_size("1.5GiB", "--max_memory") == int64_t{3} << 29);
  CHECK(bench::parse_memory_size("4096", "--max_memory") == 4096);
  CHECK_THROWS_AS(bench::parse_memory_size("lots", "--max_memory"), core::UsageError);
  CHECK_THROWS_AS(bench::parse_memory_size("2X", "--max_memory"), core::UsageError);
  CHECK(bench::failure_kind("CPU: not enough memory: you tried to allocate 1254400000 bytes.") ==
        "oom");
  CHECK(bench::failure_kind("std::bad_alloc") == "oom");
  CHECK(bench::failure_kind("CUDA out of memory. Tried to allocate 2.00 GiB") == "oom");
  CHECK(bench::failure_kind("mat1 and mat2 shapes cannot be multiplied") == "error");
}

TEST_CASE("--max_device_memory: a fraction of the device, or a size of it") {
  const int64_t device = int64_t{80} << 30;  // an 80 GiB GPU
  const char* flag = "--max_device_memory";
  CHECK(bench::device_memory_fraction("0.5", device, flag) == 0.5);
  CHECK(bench::device_memory_fraction("1", device, flag) == 1.0);
  CHECK(bench::device_memory_fraction("20G", device, flag) == doctest::Approx(0.25));
  CHECK(bench::device_memory_fraction("20G", 0, flag) == 0.0);  // no device to size it against
  CHECK_THROWS_WITH_AS(bench::device_memory_fraction("100G", device, flag),
                       "--max_device_memory 100G is more than the device's 81920 MiB",
                       core::UsageError);
  CHECK_THROWS_WITH_AS(bench::device_memory_fraction("0", device, flag),
                       "--max_device_memory takes a fraction of the device's memory in (0, 1] or "
                       "a size such as 20G, got '0'",
                       core::UsageError);
  CHECK_THROWS_AS(bench::device_memory_fraction("half", device, flag), core::UsageError);
}

namespace {

bench::PlannedPoint planned(const std::string& model, int64_t batch, bool active = true) {
  bench::PlannedPoint p;
  p.params = bench::point_schema();
  p.params["model"] = model;
  p.params["batch_size"] = batch;
  p.active = active;
  if (!active) p.inactive_reason = "enabled = false (extensions[1])";
  p.id = bench::point_id(p.params);
  return p;
}

// Runs points in this process: a model named "big" runs out of memory from batch 64 up, "bad"
// fails, anything else takes batch/10 ms per batch.
struct FakeBench {
  std::vector<std::string> ran;
  io::BenchPoint operator()(const bench::Point& point) {
    const auto model = bench::param_text(point, "model");
    const auto batch = bench::param_int(point, "batch_size");
    ran.push_back(model + "/" + std::to_string(batch));
    io::BenchPoint out;
    out.row.model = model;
    out.row.batch_size = batch;
    if (model == "big" && batch >= 64) {
      out.row.status = core::PointStatus::kFailed;
      out.row.error_kind = "oom";
      out.row.reason = "CPU: not enough memory";
      return out;
    }
    if (model == "bad") {
      out.row.status = core::PointStatus::kFailed;
      out.row.error_kind = "error";
      out.row.reason = "shapes cannot be multiplied";
      return out;
    }
    out.row.status = core::PointStatus::kOk;
    out.batch_ms = {batch / 10.0, batch / 10.0};
    out.row.p50_ms = batch / 10.0;
    return out;
  }
};

std::vector<std::string> statuses(const bench::SweepOutcome& outcome) {
  std::vector<std::string> out;
  for (const auto& r : outcome.rows) {
    out.push_back(r.model + "/" + std::to_string(r.batch_size) + " " + core::name_of(r.status) +
                  (r.reason.empty() ? "" : ": " + r.reason));
  }
  return out;
}

// A runner whose points run in this process, through `fake`.
bench::RunnerOptions in_process(FakeBench& fake) {
  bench::RunnerOptions o;
  o.isolation = bench::Isolation::kNone;
  o.run_in_process = [&fake](const bench::Point& p) { return fake(p); };
  return o;
}

}  // namespace

TEST_CASE("the runner: failures are data, out of memory skips larger batches, reruns resume") {
  const auto dir = test::scratch_dir("runner");
  const auto path = dir + "/sweep.h5";
  FakeBench fake;
  bench::RunnerOptions o = in_process(fake);
  o.out = std::fopen("/dev/null", "w");
  // larger batches first: the skip must not depend on the order
  std::vector<bench::PlannedPoint> plan = {
      planned("big", 128), planned("big", 32), planned("big", 64),      planned("big", 256),
      planned("bad", 8),   planned("ok", 8),   planned("ok", 16, false)};
  io::BenchInfo info;
  info.name = "sweep";
  {
    io::BenchFile file(path, info);
    const auto outcome = bench::run_sweep(plan, file, o);
    CHECK(statuses(outcome) ==
          std::vector<std::string>{"big/128 failed: CPU: not enough memory", "big/32 ok",
                                   "big/64 failed: CPU: not enough memory",
                                   "big/256 skipped: batch 64 ran out of memory at point 3",
                                   "bad/8 failed: shapes cannot be multiplied", "ok/8 ok",
                                   "ok/16 inactive: enabled = false (extensions[1])"});
    CHECK(outcome.ran == 5);
    file.finish(core::FileStatus::kCompleted);
  }
  CHECK(fake.ran == std::vector<std::string>{"big/128", "big/32", "big/64", "bad/8", "ok/8"});

  // again into the same file: nothing runs, the skip still holds (it lives in the file)
  fake.ran.clear();
  {
    io::BenchFile file(path, info);
    const auto outcome = bench::run_sweep(plan, file, o);
    CHECK(fake.ran.empty());
    CHECK(outcome.kept == 5);
    CHECK(statuses(outcome)[3] ==
          "big/256 skipped: batch 64 ran out of memory at point 3 (kept from the file)");
    // one numbering: the point the progress lines call [3/7], not the file's /points/2
    CHECK(file.point_count() == 7);
  }
  // --rerun failed: the failures run again, the ok points stay
  fake.ran.clear();
  o.rerun = bench::Rerun::kFailed;
  {
    io::BenchFile file(path, info);
    bench::run_sweep(plan, file, o);
    CHECK(fake.ran == std::vector<std::string>{"big/128", "big/64", "bad/8"});
  }
  // --no-oom-skip and --rerun always: everything active runs
  fake.ran.clear();
  o.rerun = bench::Rerun::kAlways;
  o.oom_skip = false;
  {
    io::BenchFile file(path, info);
    bench::run_sweep(plan, file, o);
    CHECK(fake.ran.size() == 6);
    const auto stored = file.points();
    REQUIRE(stored.size() == 7);
    CHECK(stored[3].row.status == core::PointStatus::kFailed);
    CHECK(std::get<std::string>(stored[5].parameters.at("model")) == "ok");
  }
  std::fclose(o.out);
}

TEST_CASE("the runner: a point that left the plan is listed and kept") {
  const auto dir = test::scratch_dir("runner-gone");
  const auto path = dir + "/sweep.h5";
  FakeBench fake;
  bench::RunnerOptions o = in_process(fake);
  const auto log = dir + "/log.txt";
  io::BenchInfo info;
  {
    o.out = std::fopen(log.c_str(), "w");
    io::BenchFile file(path, info);
    bench::run_sweep({planned("ok", 8), planned("ok", 16)}, file, o);
    std::fclose(o.out);
  }
  {
    o.out = std::fopen(log.c_str(), "w");
    io::BenchFile file(path, info);
    const auto outcome = bench::run_sweep({planned("ok", 8)}, file, o);
    std::fclose(o.out);
    CHECK(outcome.kept == 1);
    CHECK(file.point_count() == 2);
  }
  const auto text = test::read_text(log);
  CHECK(text.find("1 stored point is no longer in the plan") != std::string::npos);
  CHECK(text.find("batch_size=16") != std::string::npos);
}

TEST_CASE(
    "the runner: an out-of-memory failure no longer planned still skips, named by its place") {
  const auto dir = test::scratch_dir("runner-gone-oom");
  const auto path = dir + "/sweep.h5";
  FakeBench fake;
  bench::RunnerOptions o = in_process(fake);
  o.out = std::fopen("/dev/null", "w");
  io::BenchInfo info;
  {
    io::BenchFile file(path, info);
    bench::run_sweep({planned("big", 32), planned("big", 64)}, file, o);  // 64 runs out
  }
  fake.ran.clear();
  {
    // the edited sweep drops batch 64 and asks for 128: the stored failure still rules it out
    io::BenchFile file(path, info);
    const auto outcome = bench::run_sweep({planned("big", 32), planned("big", 128)}, file, o);
    CHECK(fake.ran.empty());
    CHECK(
        statuses(outcome)[1] ==
        "big/128 skipped: batch 64 ran out of memory at /points/1 of the file (no longer planned)");
  }
  std::fclose(o.out);
}

TEST_CASE("the runner: repeats merge their batches and flag a spread") {
  const auto dir = test::scratch_dir("runner-repeat");
  int calls = 0;
  bench::RunnerOptions o;
  o.isolation = bench::Isolation::kNone;
  o.repeat = 3;
  o.out = std::fopen("/dev/null", "w");
  o.run_in_process = [&calls](const bench::Point&) {
    io::BenchPoint p;
    p.row.status = core::PointStatus::kOk;
    const double ms = ++calls == 2 ? 12.0 : 10.0;  // one slow repeat: 20% spread
    p.batch_ms = {ms, ms};
    p.row.p50_ms = ms;
    p.part_ms["forward"] = {ms / 2, ms / 2};
    p.part_ms["backward"] = {ms / 4, ms / 4};
    return p;
  };
  io::BenchFile file(dir + "/r.h5", io::BenchInfo{});
  const auto outcome = bench::run_sweep({planned("ok", 8)}, file, o);
  std::fclose(o.out);
  REQUIRE(outcome.rows.size() == 1);
  const auto& row = outcome.rows[0];
  CHECK(row.repeats == 3);
  CHECK(row.num_batches == 6);
  CHECK(row.p50_spread == doctest::Approx(0.2));
  CHECK(row.unstable);
  CHECK(row.mean_ms == doctest::Approx(64.0 / 6));
  const auto stored = io::BenchFile::read_point(dir + "/r.h5", 0);
  CHECK(stored.batch_repeat == std::vector<int64_t>{0, 0, 1, 1, 2, 2});
  // the parts of every repeat's batches, and their means in the row
  CHECK(stored.part_ms.at("forward") == std::vector<double>{5, 5, 6, 6, 5, 5});
  CHECK(stored.part_ms.at("backward").size() == 6);
  CHECK(stored.part_ms.count("data") == 0);
  CHECK(row.forward_ms == doctest::Approx(32.0 / 6));
  CHECK(row.backward_ms == doctest::Approx(16.0 / 6));
  CHECK(std::isnan(row.data_ms));
  CHECK(std::isnan(row.optimizer_ms));
  CHECK(stored.row.forward_ms == doctest::Approx(row.forward_ms));
  CHECK(std::isnan(stored.row.optimizer_ms));
}

TEST_CASE("the runner: data-parallel points get the world's throughput and a scaling efficiency") {
  const auto dir = test::scratch_dir("runner-scaling");
  bench::RunnerOptions o;
  o.isolation = bench::Isolation::kNone;
  o.out = std::fopen("/dev/null", "w");
  // one process: 10 ms a batch; two: 12.5 ms a batch of the same size on each (80%); four at
  // half the batch: 5 ms (strong scaling against batch 8 on one process: 50%)
  o.run_in_process = [](const bench::Point& params) {
    io::BenchPoint p;
    p.row.status = core::PointStatus::kOk;
    p.row.batch_size = bench::param_int(params, "batch_size");
    p.row.world_size = bench::param_int(params, "world_size");
    const double ms = p.row.world_size == 1 ? 10.0 : p.row.world_size == 2 ? 12.5 : 5.0;
    p.batch_ms = {ms, ms};
    return p;
  };
  auto point = [](int64_t batch, int64_t world) {
    auto p = planned("mlp", batch);
    p.params["world_size"] = world;
    p.id = bench::point_id(p.params);
    return p;
  };
  // world_size 1 leaves the id as it was before the parameter existed
  auto before = planned("mlp", 8).params;
  before.erase("world_size");
  CHECK(point(8, 1).id == bench::point_id(before));
  CHECK(point(8, 2).id != point(8, 1).id);
  CHECK(bench::point_flags(point(8, 1).params) == bench::point_flags(planned("mlp", 8).params));
  const auto flags = bench::point_flags(point(8, 2).params);
  CHECK(std::find(flags.begin(), flags.end(), "--nproc") != flags.end());

  io::BenchFile file(dir + "/s.h5", io::BenchInfo{});
  // the baselines come after the points that need them: the efficiency is filled in at the end
  const auto outcome =
      bench::run_sweep({point(8, 2), point(2, 4), point(16, 2), point(8, 1)}, file, o);
  std::fclose(o.out);
  REQUIRE(outcome.rows.size() == 4);
  const auto& two = outcome.rows[0];
  CHECK(two.throughput == doctest::Approx(2 * 8 / 0.0125));
  CHECK(two.throughput_per_rank == doctest::Approx(8 / 0.0125));
  CHECK(two.scaling_efficiency == doctest::Approx(0.8));
  CHECK(outcome.rows[1].scaling_efficiency == doctest::Approx(0.5));  // same global batch, 8
  CHECK(std::isnan(outcome.rows[2].scaling_efficiency));  // no one-process point at 16 or 32
  CHECK(std::isnan(outcome.rows[3].scaling_efficiency));
  CHECK(std::isnan(outcome.rows[3].throughput_per_rank));
  const auto stored = io::BenchFile::read_point(dir + "/s.h5", two.point);
  CHECK(stored.row.scaling_efficiency == doctest::Approx(0.8));
  CHECK(stored.row.world_size == 2);

  const auto table = bench::results_table(outcome.rows);
  CHECK(table.find("procs") != std::string::npos);
  CHECK(table.find("80%") != std::string::npos);
  CHECK(table.find("50%") != std::string::npos);
  CHECK(bench::results_table({outcome.rows[3]}).find("procs") == std::string::npos);
}

TEST_CASE("a point's launcher: environment assignments, then the words before its command") {
  auto launcher =
      bench::parse_launcher("OMP_NUM_THREADS=20 numactl --localalloc --physcpubind=0-19");
  CHECK(launcher.variables ==
        std::vector<std::pair<std::string, std::string>>{{"OMP_NUM_THREADS", "20"}});
  CHECK(launcher.prefix ==
        std::vector<std::string>{"numactl", "--localalloc", "--physcpubind=0-19"});
  launcher = bench::parse_launcher("  A=1 B='x y'  ");
  CHECK(launcher.variables ==
        std::vector<std::pair<std::string, std::string>>{{"A", "1"}, {"B", "x y"}});
  CHECK(launcher.prefix.empty());
  launcher = bench::parse_launcher("taskset -c 0 env X=1");  // X=1 after a command is its word
  CHECK(launcher.variables.empty());
  CHECK(launcher.prefix == std::vector<std::string>{"taskset", "-c", "0", "env", "X=1"});
  CHECK(bench::parse_launcher("").prefix.empty());
  CHECK_THROWS_WITH_AS(bench::parse_launcher("numactl '--physcpubind=0"),
                       "the launcher 'numactl '--physcpubind=0' has a ' quote that does not close",
                       core::UsageError);
  // checked before anything runs; a launcher needs the point's own process
  bench::PlannedPoint p;
  p.params = bench::point_schema();
  p.params["model"] = std::string("mlp");
  p.params["launcher"] = std::string("taskset -c 0");
  CHECK_NOTHROW(bench::check_isolation({p}, bench::Isolation::kProcess));
  CHECK_THROWS_WITH_AS(bench::check_isolation({p}, bench::Isolation::kNone),
                       "the launcher 'taskset -c 0' starts the point's process: run the sweep "
                       "with --isolate process",
                       core::UsageError);
}
