// One benchmark point from its parameters, in this process: what engine bench --model and a
// sweep with --isolate none run.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

#include "engine/bench/data_feed.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/statuses.hpp"
#include "engine/data/caffe_lmdb.hpp"
#include "engine/run/bench_point.hpp"
#include "tests/test_support.hpp"

namespace bench = engine::bench;
namespace run = engine::run;
using bench::Point;

namespace {

// A session like the CLI's: the folder of a module file first, then the engine's modules/.
engine::lua::RuntimeOptions session_in(const std::string& dir) {
  const char* source = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE_MESSAGE(source != nullptr, "CTest sets ENGINE_SOURCE_DIR");
  engine::lua::RuntimeOptions options;
  options.script_dir = dir;
  options.package_dirs = {dir, std::string(source) + "/modules"};
  return options;
}

// A tiny point: two timed batches after one warm-up, on one thread.
Point tiny(const std::string& model) {
  return {{"model", model},
          {"batch_size", int64_t{4}},
          {"num_batches", int64_t{2}},
          {"num_warmup_batches", int64_t{1}},
          {"threads", int64_t{1}}};
}

std::string write_linear_module(const std::string& dir) {
  const std::string path = dir + "/linear.lua";
  std::ofstream(path) << "local nn = require 'nn'\n"
                         "local Net = nn.Module:extend('Net')\n"
                         "function Net:init() self.fc = nn.Linear(4, 2) end\n"
                         "function Net:forward(x) return self.fc(x) end\n"
                         "return Net\n";
  return path;
}

}  // namespace

TEST_CASE("bench point: a zoo model timed from its parameters, the rest defaults") {
  const auto dir = engine::test::scratch_dir("bench-point-zoo");
  run::BenchRequest request;
  request.point = tiny("mlp");
  request.point["cudnn_benchmark"] = true;  // set: n/a on the CPU
  request.lua = session_in(dir);
  const auto measured = run::measure_point(request);
  const auto& row = measured.point.row;
  CHECK(row.status == engine::core::PointStatus::kOk);
  CHECK(row.model == "mlp");
  CHECK(row.phase == "training");
  CHECK(row.device == "cpu");
  CHECK(row.dtype == "float32");
  CHECK(row.batch_size == 4);
  CHECK(row.num_batches == 2);
  CHECK(row.world_size == 1);
  CHECK(measured.point.batch_ms.size() == 2);
  CHECK(measured.not_applicable == std::vector<std::string>{"cudnn_benchmark (no cuDNN on cpu)"});
  CHECK(std::get<std::string>(measured.point.details.at("not_applicable")) ==
        "cudnn_benchmark (no cuDNN on cpu)");
  CHECK(std::get<std::string>(measured.point.details.at("loss")) == "NLLLoss");
  CHECK(std::get<int64_t>(measured.point.details.at("classes")) == 10);
}

TEST_CASE("bench point: a module file's shape and classes come from the point") {
  const auto dir = engine::test::scratch_dir("bench-point-file");
  const auto path = write_linear_module(dir);
  run::BenchRequest request;
  request.point = tiny(path);
  request.lua = session_in(dir);
  try {
    run::measure_point(request);
    FAIL("a module that does not say its input ran");
  } catch (const engine::core::UsageError& e) {
    CHECK(std::string(e.what()).find("does not say its input shape: give --input_shape") !=
          std::string::npos);
  }
  request.point["input_shape"] = std::string("4");
  request.point["num_classes"] = int64_t{2};
  const auto measured = run::measure_point(request);
  CHECK(measured.point.row.status == engine::core::PointStatus::kOk);
  CHECK(std::get<std::string>(measured.point.details.at("input_shape")) == "[4]");
  CHECK(std::get<int64_t>(measured.point.details.at("classes")) == 2);
}

TEST_CASE("bench point: in this process a failure comes back as a failed point") {
  const auto dir = engine::test::scratch_dir("bench-point-failed");
  Point point = tiny("mlp");
  point["dtype"] = std::string("int8");
  const auto failed = run::run_point_in_process(point, session_in(dir));
  CHECK(failed.row.status == engine::core::PointStatus::kFailed);
  CHECK(failed.row.error_kind == "error");
  CHECK(failed.row.reason.find("--dtype must be") == 0);
  CHECK(failed.row.model == "mlp");
  CHECK(failed.row.dtype == "int8");
  CHECK(failed.row.phase == "training");  // the default, as the point did not set it
  CHECK(failed.row.batch_size == 4);

  point = tiny("mlp");
  point["world_size"] = int64_t{2};
  const auto refused = run::run_point_in_process(point, session_in(dir));
  CHECK(refused.row.status == engine::core::PointStatus::kFailed);
  CHECK(refused.row.reason ==
        "world_size 2 starts processes of its own: run the sweep with --isolate process");

  const auto ran = run::run_point_in_process(tiny("mlp"), session_in(dir));
  CHECK(ran.row.status == engine::core::PointStatus::kOk);
  CHECK(ran.row.threads == 1);

  run::BenchRequest nothing;
  nothing.lua = session_in(dir);
  CHECK_THROWS_WITH_AS(run::measure_point(nothing), doctest::Contains("engine bench needs a model"),
                       engine::core::UsageError);
}

TEST_CASE("bench point: real data from a Caffe LMDB, through DLBS's training transforms") {
  if (!engine::data::caffe_lmdb_available()) return;
  const auto dir = engine::test::scratch_dir("bench-point-lmdb");
  std::vector<torch::Tensor> images;
  std::vector<int64_t> labels;
  for (int i = 0; i < 12; ++i) {
    images.push_back(torch::randint(0, 255, {3, 40, 36}, torch::kInt64).to(torch::kUInt8));
    labels.push_back(i % 10);
  }
  engine::data::write_caffe_lmdb(dir + "/lmdb", images, labels);

  // training: random crops to the model's 32 x 32 and flips, as DLBS's loader; inference:
  // resize and center crop
  bench::DataOptions options;
  options.real = true;
  options.dir = dir + "/lmdb";
  options.backend = "caffe_lmdb";
  const auto training = bench::point_pipeline(options, {3, 32, 32}, 10, 4, 1);
  CHECK(training.describe().find("random_resized_crop(32x32) | random_flip(p=0.5)") !=
        std::string::npos);
  options.augment = false;
  CHECK(bench::point_pipeline(options, {3, 32, 32}, 10, 4, 1).describe().find("center_crop") !=
        std::string::npos);

  run::BenchRequest request;
  request.point = tiny("resnet20_cifar");
  request.point["data"] = std::string("real");
  request.point["data_backend"] = std::string("caffe_lmdb");
  request.point["data_dir"] = dir + "/lmdb";
  request.lua = session_in(dir);
  const auto measured = run::measure_point(request);
  CHECK(measured.point.row.status == engine::core::PointStatus::kOk);
  CHECK(measured.point.row.data_ms > 0);
}
