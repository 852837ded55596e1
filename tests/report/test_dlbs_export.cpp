// engine report --format dlbs: each point as the record DLBS's tools read, checked against the
// keys and types of tests/fixtures/dlbs/record_keys.txt (written from DLBS's own readers).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/core/statuses.hpp"
#include "engine/report/dlbs_export.hpp"

using namespace engine;
using Json = nlohmann::json;

namespace {

struct ExpectedKey {
  std::string key, type;
  bool ok_only = false;
};

std::vector<ExpectedKey> fixture_keys() {
  const char* root = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE(root != nullptr);
  std::ifstream in(std::string(root) + "/tests/fixtures/dlbs/record_keys.txt");
  REQUIRE(in.good());
  std::vector<ExpectedKey> keys;
  bool ok_only = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# present on an ok point only", 0) == 0) ok_only = true;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ExpectedKey key;
    fields >> key.key >> key.type;
    key.ok_only = ok_only;
    keys.push_back(key);
  }
  return keys;
}

bool has_type(const Json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "array") return value.is_array();
  FAIL("record_keys.txt: unknown type " << type);
  return false;
}

io::BenchPoint point(int64_t index, const std::string& model, const std::string& device,
                     int64_t world, core::PointStatus status) {
  io::BenchPoint p;
  p.row.point = index;
  p.row.point_id = "id" + std::to_string(index);
  p.row.model = model;
  p.row.phase = "training";
  p.row.device = device;
  p.row.dtype = "float32";
  p.row.batch_size = 32;
  p.row.world_size = world;
  p.row.num_batches = 4;
  p.row.status = status;
  if (status == core::PointStatus::kOk) {
    p.resources = {{"seconds", {0.1, 0.2}}, {"cpu_percent", {150, 190}}, {"resident_mb", {80, 90}}};
    p.batch_ms = {1.0, 2.0, 3.0, 4.0};
    p.row.mean_ms = 2.5;
    p.row.throughput = 32.0 * world * 1000.0 / 2.5;
  } else {
    p.row.reason = "out of memory";
  }
  p.parameters = {{"model", model},
                  {"batch_size", int64_t{32}},
                  {"data", std::string("synthetic")},
                  {"num_batches", int64_t{4}},
                  {"num_warmup_batches", int64_t{1}},
                  {"seed", int64_t{7}}};
  return p;
}

const report::DlbsNames kNames = {{"model", "exp.model"},
                                  {"batch_size", "exp.replica_batch"},
                                  {"data", "exp.data"},
                                  {"num_batches", "exp.num_batches"},
                                  {"num_warmup_batches", "exp.num_warmup_batches"}};

}  // namespace

TEST_CASE("every DLBS record has the keys DLBS's tools read, with their types") {
  io::BenchContents file;
  file.path = "runs/bench/s/1.h5";
  file.attributes = {{"hostname", std::string("node7")},
                     {"cpu_model", std::string("Xeon")},
                     {"gpu_name", std::string("NVIDIA H100")}};
  file.points = {point(0, "resnet50", "cpu", 1, core::PointStatus::kOk),
                 point(1, "resnet50", "cuda:0", 4, core::PointStatus::kOk),
                 point(2, "my_net", "cuda:1", 1, core::PointStatus::kFailed),
                 // disabled (DLBS's exp.status = disabled): never run, so no record (issue 60)
                 point(3, "vgg16", "cpu", 1, core::PointStatus::kInactive)};
  const Json document = Json::parse(report::dlbs_document({file}, kNames));
  REQUIRE(document["data"].size() == 3);
  for (const auto& record : document["data"]) CHECK(record["exp.model"] != "vgg16");
  const auto keys = fixture_keys();
  REQUIRE(keys.size() >= 15);
  for (const auto& record : document["data"]) {
    const bool ok = record["exp.status"] == "ok";
    for (const auto& key : keys) {
      if (key.ok_only && !ok) continue;
      INFO(key.key << " in " << record.dump());
      REQUIRE(record.contains(key.key));
      CHECK(has_type(record[key.key], key.type));
    }
  }

  const Json& cpu = document["data"][0];
  CHECK(cpu["exp.model_title"] == "ResNet50");
  CHECK(cpu["exp.device_type"] == "cpu");
  CHECK(cpu["exp.gpus"] == "");
  CHECK(cpu["exp.num_gpus"] == 0);
  CHECK(cpu["exp.device_title"] == "Xeon");
  CHECK(cpu["exp.node_title"] == "node7");
  CHECK(cpu["results.time"].get<double>() == doctest::Approx(2.5));
  // NumPy's std (over n) of 1, 2, 3, 4: sqrt(1.25), where the n - 1 estimate is sqrt(5/3)
  CHECK(cpu["results.time_std"].get<double>() == doctest::Approx(std::sqrt(1.25)));
  CHECK(cpu["results.throughput"] == 12800);
  CHECK(cpu["results.time_data"].size() == 4);
  CHECK(cpu["engine.seed"] == 7);  // a parameter DLBS has no name for keeps the engine's
  // the resource monitor's series as DLBS's monitor writes them
  CHECK(cpu["results.use.time"] == Json::array({0.1, 0.2}));
  CHECK(cpu["results.use.cpu"] == Json::array({150.0, 190.0}));
  CHECK(cpu["results.use.mem_res"] == Json::array({80.0, 90.0}));
  CHECK_FALSE(cpu.contains("results.use.gpus"));

  const Json& gpus = document["data"][1];
  CHECK(gpus["exp.device_type"] == "gpu");
  CHECK(gpus["exp.gpus"] == "0,1,2,3");
  CHECK(gpus["exp.num_gpus"] == 4);
  CHECK(gpus["exp.effective_batch"] == 128);
  CHECK(gpus["exp.replica_batch"] == 32);
  CHECK(gpus["exp.device_title"] == "NVIDIA H100");
  CHECK(gpus["results.throughput"] == 51200);

  const Json& failed = document["data"][2];
  CHECK(failed["exp.model_title"] == "my_net");
  CHECK(failed["exp.gpus"] == "1");
  CHECK(failed["exp.status"] == "failed");
  CHECK(failed["results.status"] == "failure");
  CHECK_FALSE(failed.contains("results.time"));  // DLBS counts it failed: no time above 0
  CHECK(failed["engine.reason"] == "out of memory");
}

TEST_CASE("a DLBS log of a point: its experiment's parameters, then what was measured") {
  io::BenchContents file;
  file.path = "runs/bench/s/1.h5";
  file.attributes = {{"hostname", std::string("node7")}, {"cpu_model", std::string("Xeon")}};
  const auto ok = point(0, "resnet50", "cpu", 1, core::PointStatus::kOk);
  const std::string experiment =
      R"({"exp.status": "ok", "exp.framework": "pytorch", "exp.model": "resnet50",
          "exp.log_file": "/logs/r50.log", "my.label": "x", "exp.replica_batch": 32})";
  const std::string log = report::dlbs_log(experiment, file, ok, kNames);
  // every line DLBS's log parser's pattern: __NAME__= JSON
  Json parsed = Json::object();
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const auto end = line.find("__= ");
    REQUIRE(line.rfind("__", 0) == 0);
    REQUIRE(end != std::string::npos);
    parsed[line.substr(2, end - 2)] = Json::parse(line.substr(end + 4));  // the last one stands
  }
  CHECK(parsed["exp.framework"] == "pytorch");  // the config's, not the export's "engine"
  CHECK(parsed["my.label"] == "x");
  CHECK(parsed["exp.log_file"] == "/logs/r50.log");
  CHECK(parsed["exp.status"] == "ok");
  CHECK(parsed["results.time"].get<double>() == doctest::Approx(2.5));
  CHECK(parsed["results.time_data"].size() == 4);
  // every key DLBS's tools read, with its type, as in the export
  for (const auto& key : fixture_keys()) {
    INFO(key.key);
    REQUIRE(parsed.contains(key.key));
    CHECK(has_type(parsed[key.key], key.type));
  }
  // a failed point's log says so
  const auto failed = point(1, "resnet50", "cpu", 1, core::PointStatus::kFailed);
  const std::string bad = report::dlbs_log(experiment, file, failed, kNames);
  CHECK(bad.find("__exp.status__= \"failed\"") != std::string::npos);
  CHECK(bad.find("__results.status__= \"failure\"") != std::string::npos);
  CHECK(bad.find("__results.time__=") == std::string::npos);
}
