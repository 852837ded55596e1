// DLBS's JSON configs planned as DLBS plans them: every experiment and each of its parameters
// equal to what DLBS's own Builder and Processor made of the same config
// (tests/fixtures/dlbs/plans.json, from tests/fixtures/generate_dlbs_plans.py), and the
// engine's points made of them.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

#include "engine/bench/dlbs_config.hpp"
#include "engine/bench/dlbs_points.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/core/errors.hpp"

using namespace engine;
using bench::DlbsJson;

namespace {

DlbsJson fixture() {
  const char* root = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE(root != nullptr);
  std::ifstream in(std::string(root) + "/tests/fixtures/dlbs/plans.json");
  REQUIRE(in.good());
  return DlbsJson::parse(in);
}

bench::DlbsRequest request_of(const DlbsJson& c, const DlbsJson& environment) {
  bench::DlbsRequest request;
  request.path = c["name"].get<std::string>();
  request.config = DlbsJson::parse(c["config"].get<std::string>());
  for (const auto& [name, value] : c["params"].items()) request.params.emplace_back(name, value);
  request.environment = [environment](const std::string& name) -> std::optional<std::string> {
    if (!environment.contains(name)) return std::nullopt;
    return environment[name].get<std::string>();
  };
  return request;
}

bool same(const DlbsJson& a, const DlbsJson& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  return a == b;
}

// A config of its own, planned with BENCH_ROOT=/bench.
std::vector<DlbsJson> plan(const std::string& config) {
  bench::DlbsRequest request;
  request.path = "test.json";
  request.config = DlbsJson::parse(config);
  request.environment = [](const std::string& name) -> std::optional<std::string> {
    if (name == "BENCH_ROOT") return std::string("/bench");
    return std::nullopt;
  };
  return bench::plan_dlbs(request);
}

std::string plan_error_of(const std::string& config) {
  try {
    plan(config);
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("DLBS configs planned as DLBS's own planner plans them") {
  const DlbsJson all = fixture();
  REQUIRE(all["cases"].size() >= 4);
  for (const auto& c : all["cases"]) {
    CAPTURE(c["name"].get<std::string>());
    const auto got = bench::plan_dlbs(request_of(c, all["environment"]));
    const auto& expected = c["experiments"];
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      for (const auto& [name, value] : expected[i].items()) {
        CAPTURE(name);
        REQUIRE(got[i].contains(name));
        CHECK_MESSAGE(same(got[i][name], value), got[i][name].dump() << " != " << value.dump());
      }
    }
  }
}

TEST_CASE("a DLBS config's experiments as the engine's points") {
  const DlbsJson all = fixture();
  for (const auto& c : all["cases"]) {
    if (c["name"] != "tests/fixtures/dlbs/configs/sweep.json") continue;
    const auto points =
        bench::dlbs_points(bench::plan_dlbs(request_of(c, all["environment"])), "sweep.json");
    REQUIRE(points.plan.size() == 8);
    size_t active = 0;
    for (const auto& p : points.plan) active += p.active ? 1 : 0;
    CHECK(active == 7);
    const auto& first = points.plan[0].params;
    CHECK(bench::param_text(first, "model") == "resnet18");
    CHECK(bench::param_int(first, "batch_size") == 2);
    CHECK(bench::param_int(first, "num_batches") == 9);         // the extension's $(...)$
    CHECK(bench::param_int(first, "num_warmup_batches") == 2);  // the file's
    CHECK(bench::param_text(first, "device") == "cpu");         // exp.gpus "": no GPU
    CHECK(bench::param_int(first, "world_size") == 1);
    const auto& disabled = points.plan.back();
    CHECK(bench::param_text(disabled.params, "model") == "vgg11");
    CHECK_FALSE(disabled.active);
    CHECK(disabled.inactive_reason == "exp.status = disabled");
    // DLBS's names the engine has no use for are listed, never refused
    CHECK(points.not_used.count("exp.framework") == 1);
    CHECK(points.not_used.count("my.label") == 1);
    CHECK(points.not_used.count("exp.log_file") == 1);
    CHECK(points.not_used.count("exp.model") == 0);
  }
  // DLBS's defaults: 100 batches after 1 warm-up; exp.gpus "0" is a GPU, "0,1" two processes
  const auto gpu = bench::dlbs_points(plan(R"({"parameters": {"exp.model": "resnet18"},
                                               "variables": {"exp.gpus": ["0", "0,1"]}})"),
                                      "gpus.json");
  REQUIRE(gpu.plan.size() == 2);
  CHECK(bench::param_int(gpu.plan[0].params, "num_batches") == 100);
  CHECK(bench::param_int(gpu.plan[0].params, "num_warmup_batches") == 1);
  CHECK(bench::param_text(gpu.plan[0].params, "device") == "cuda");
  CHECK(bench::param_int(gpu.plan[1].params, "world_size") == 2);
  // GPUs other than the first ones: through CUDA_VISIBLE_DEVICES before the point's own launcher
  const auto other = bench::dlbs_points(
      plan(R"({"parameters": {"exp.model": "resnet18", "runtime.launcher": "taskset -c 0-7"},
               "variables": {"exp.gpus": ["3", "4,5"]}})"),
      "other.json");
  REQUIRE(other.plan.size() == 2);
  CHECK(bench::param_text(other.plan[0].params, "device") == "cuda:3");
  CHECK(bench::param_text(other.plan[0].params, "launcher") == "taskset -c 0-7");
  CHECK(bench::param_text(other.plan[1].params, "device") == "cuda");
  CHECK(bench::param_int(other.plan[1].params, "world_size") == 2);
  CHECK(bench::param_text(other.plan[1].params, "launcher") ==
        "CUDA_VISIBLE_DEVICES=4,5 taskset -c 0-7");
  // two frameworks: the same point for the engine, run once
  const auto frameworks =
      bench::dlbs_points(plan(R"({"parameters": {"exp.model": "resnet18", "exp.gpus": ""},
               "variables": {"exp.framework": ["pytorch", "tensorflow"]}})"),
                         "frameworks.json");
  REQUIRE(frameworks.plan.size() == 2);
  CHECK(frameworks.plan[0].active);
  CHECK_FALSE(frameworks.plan[1].active);
  CHECK(frameworks.plan[1].inactive_reason.find("the same point as experiment 1") !=
        std::string::npos);
}

TEST_CASE("a DLBS config that cannot be planned says which parameter and why") {
  CHECK(plan_error_of(R"({"parameters": {"exp.log_file": "${exp.nope}/x"}})")
            .find("test.json: parameter 'exp.log_file' = '${exp.nope}/x' refers to ${exp.nope}, "
                  "which is no parameter of the experiment (a misspelt name?)") !=
        std::string::npos);
  CHECK(plan_error_of(R"({"parameters": {"exp.log_file": "${LOGS}/x"}})")
            .find("and no environment variable (DLBS's scripts export LOGS; export it before "
                  "engine bench)") != std::string::npos);
  CHECK(plan_error_of(R"({"parameters": {"a.x": "${a.y}", "a.y": "${a.x}"}})")
            .find("refers to itself through its references (a cycle)") != std::string::npos);
  CHECK(plan_error_of(R"({"parameters": {"a.x": "$(1 +"}})").find("no ')$' closes its '$('") !=
        std::string::npos);
  CHECK(plan_error_of(R"({"parameters": {"a.x": "$(nope(1))$"}})")
            .find("parameter 'a.x' = '$(nope(1))$': cannot evaluate the Python expression "
                  "'nope(1)': name 'nope' is not defined") != std::string::npos);
  CHECK(plan_error_of(R"({"parameters": {"exp.replica_batch": "$('many')$"}})")
            .find("parameter 'exp.replica_batch' is a int parameter, but its value computes to "
                  "'many'") != std::string::npos);
  CHECK(plan_error_of(R"({"parameters": {"exp.model": "${exp.phase}"},
                     "extensions": [{"condition": {"exp.model": "resnet"}}]})")
            .find("extensions[1]: a condition must not use a parameter that is not a constant "
                  "(exp.model = ${exp.phase})") != std::string::npos);
  CHECK(
      plan_error_of(R"({"parameter": {}})").find("'parameter' is not a section of a DLBS config") !=
      std::string::npos);
  CHECK(plan_error_of(R"({"variables": {"exp.model": []}})")
            .find("variable 'exp.model' has no values") != std::string::npos);
  CHECK(plan_error_of(R"({"variables": {"exp.model": [{}]}})")
            .find("variable 'exp.model' has the value {}; a variable's values are strings, "
                  "numbers or booleans") != std::string::npos);
  CHECK(plan_error_of(R"({"extensions": [{"parameters": []}]})")
            .find("test.json: extensions[1]'s parameters is [], not an object") !=
        std::string::npos);
  CHECK(plan_error_of(R"({"extensions": [{"condition": ["exp.model"]}]})")
            .find("extensions[1]'s condition is [\"exp.model\"], not an object") !=
        std::string::npos);
  CHECK(plan_error_of(R"({"extensions": [{"cases": [1]}]})")
            .find("extensions[1]'s cases are [1], not a list of objects") != std::string::npos);
  std::string chain = R"({"parameters": {)";  // a.0 = ${a.1}, ..., a.1199 = 1
  for (int i = 0; i < 1200; ++i) {
    chain += "\"a." + std::to_string(i) + "\": \"${a." + std::to_string(i + 1) + "}\", ";
  }
  chain += R"("a.1200": 1}})";
  CHECK(plan_error_of(chain).find("is computed through a chain of more than 1000 references") !=
        std::string::npos);
  CHECK(plan_error_of(R"({"extensions": [{"case": []}]})")
            .find("extensions[1] has 'case'; an extension has condition, parameters and cases") !=
        std::string::npos);
}
