// The one table of a point's parameters: the schema, the flags a child gets, the reading of
// flags and points into PointOptions, the n/a list, and docs/benchmarks.md's rows.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/bench/parameters.hpp"
#include "engine/bench/point_options.hpp"
#include "engine/core/errors.hpp"

namespace bench = engine::bench;
using bench::Point;
using bench::Value;

namespace {

// A point as the CLI makes it from flags: each one's text read as the parameter's type.
Point point_from_texts(const std::vector<std::pair<std::string, std::string>>& flags) {
  Point point;
  for (const auto& [name, text] : flags) {
    const bench::Parameter* parameter = bench::find_parameter(name);
    REQUIRE(parameter != nullptr);
    point[name] = bench::parse_parameter(*parameter, text);
  }
  return point;
}

std::string thrown_by(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const engine::core::UsageError& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

}  // namespace

TEST_CASE("parameters: one table, unique names, the schema and the defaults from it") {
  std::set<std::string> names;
  for (const auto& parameter : bench::point_parameters()) {
    CHECK_MESSAGE(names.insert(parameter.name).second, parameter.name);
    CHECK(bench::point_schema().at(parameter.name) == parameter.default_value);
  }
  CHECK(names.size() == bench::point_schema().size());
  CHECK(std::get<int64_t>(bench::point_schema().at("batch_size")) == 16);
  CHECK(bench::find_parameter("batch_size")->dlbs == "exp.replica_batch");
  CHECK(bench::find_parameter("forward_only") ==
        nullptr);  // an alias of the phase, not a parameter
  CHECK(bench::takes_boolean(*bench::find_parameter("tf32")));
  CHECK(bench::takes_boolean(*bench::find_parameter("data_shuffle")));
  CHECK_FALSE(bench::takes_boolean(*bench::find_parameter("threads")));
}

TEST_CASE("parameters: a flag's text is read as the parameter's type, errors name the flag") {
  const auto& batch = *bench::find_parameter("batch_size");
  CHECK(std::get<int64_t>(bench::parse_parameter(batch, "64")) == 64);
  CHECK(thrown_by([&] { bench::parse_parameter(batch, "6x4"); }) ==
        "--batch_size takes an integer, got '6x4'");
  CHECK(thrown_by([&] { bench::parse_parameter(batch, ""); }) ==
        "--batch_size takes an integer, got ''");
  const auto& shuffle = *bench::find_parameter("data_shuffle");
  CHECK(std::get<bool>(bench::parse_parameter(shuffle, "yes")) == true);
  CHECK(thrown_by([&] { bench::parse_parameter(shuffle, "maybe"); }) ==
        "--data_shuffle takes true or false, got 'maybe'");
  // tf32 stays a text (unset keeps PyTorch's defaults), checked and written as a sweep writes it
  CHECK(std::get<std::string>(bench::parse_parameter(*bench::find_parameter("tf32"), "on")) ==
        "true");
  CHECK(std::get<std::string>(bench::parse_parameter(*bench::find_parameter("model"), "mlp")) ==
        "mlp");
}

TEST_CASE("parameters: a point's flags read back into the same point") {
  const Point point = {{"model", std::string("mlp")},
                       {"batch_size", int64_t{8}},
                       {"data_shuffle", true},
                       {"tf32", std::string("false")},
                       {"num_loader_threads", int64_t{2}},
                       {"num_classes", int64_t{0}},
                       {"world_size", int64_t{1}},
                       {"enabled", true},
                       {"label", std::string("x")},
                       {"_mine", int64_t{3}}};
  const auto flags = bench::point_flags(point);
  // set parameters only: num_classes 0 means unset, world_size 1 is one process
  CHECK(flags == std::vector<std::string>{"--batch_size", "8", "--data_shuffle", "true", "--model",
                                          "mlp", "--num_loader_threads", "2", "--tf32", "false"});
  std::vector<std::pair<std::string, std::string>> texts;
  for (size_t i = 0; i + 1 < flags.size(); i += 2)
    texts.emplace_back(flags[i].substr(2), flags[i + 1]);
  const Point read = point_from_texts(texts);
  for (const auto& [name, value] : read) CHECK_MESSAGE(point.at(name) == value, name);
  CHECK(bench::point_flags(Point{{"world_size", int64_t{4}}}) ==
        std::vector<std::string>{"--nproc", "4"});
}

TEST_CASE("parameters: point_options from an empty point are the defaults") {
  const auto o = bench::point_options(Point{});
  CHECK(o.batch_size == 16);
  CHECK(o.batches == 20);
  CHECK(o.warmup_batches == 3);
  CHECK(o.phase == bench::Phase::kTraining);
  CHECK(o.device.is_cpu());
  CHECK(o.precision == engine::train::Precision::kFloat32);
  CHECK(o.seed == 1);
  CHECK_FALSE(o.data.real);
  CHECK(o.data.loader_threads == 0);
  CHECK_FALSE(o.cuda_graphs);
  CHECK_FALSE(o.channels_last);
  CHECK(o.input_shape.empty());
  CHECK(o.classes == 0);  // the model's own
  const auto settings = bench::point_device_settings(Point{});
  CHECK(settings.cudnn_benchmark);
  CHECK_FALSE(settings.tf32.has_value());
}

TEST_CASE("parameters: point_options reads DLBS's names and refuses what cannot run") {
  const auto o = bench::point_options(point_from_texts({{"dtype", "float"},
                                                        {"phase", "inference"},
                                                        {"input_shape", "1,28,28"},
                                                        {"num_classes", "10"},
                                                        {"memory_format", "channels_last"},
                                                        {"data", "real"},
                                                        {"data_dir", "/d"},
                                                        {"data_backend", "idx"}}));
  CHECK(o.precision == engine::train::Precision::kFloat32);
  CHECK(o.phase == bench::Phase::kInference);
  CHECK(o.input_shape == std::vector<int64_t>{1, 28, 28});
  CHECK(o.classes == 10);
  CHECK(o.channels_last);
  CHECK(o.data.real);
  CHECK(o.data.dir == "/d");
  CHECK(bench::point_device_settings(point_from_texts({{"tf32", "true"}})).tf32 == true);
  // DLBS's synthetic/device: the engine's synthetic batch, made once on the device
  CHECK_FALSE(bench::point_options(point_from_texts({{"data", "synthetic/device"}})).data.real);
  // DLBS's host-memory synthetic data: pinned or pageable; a data_dir alone is Caffe's LMDB
  CHECK(bench::point_options(point_from_texts({{"data", "synthetic/pinned"}})).data.place ==
        bench::SyntheticPlace::kPinned);
  CHECK(bench::point_options(point_from_texts({{"data", "synthetic/pageable"}})).data.place ==
        bench::SyntheticPlace::kPageable);
  CHECK(bench::point_options(point_from_texts({{"data", "synthetic"}})).data.place ==
        bench::SyntheticPlace::kDevice);
  CHECK(
      bench::point_options(point_from_texts({{"data", "real"}, {"data_dir", "/d"}})).data.backend ==
      "caffe_lmdb");
  CHECK(thrown_by([] {
          bench::point_options(point_from_texts({{"data", "lmdb"}}));
        }) ==
        "--data must be synthetic (DLBS's synthetic/device), synthetic/pinned, "
        "synthetic/pageable or real, got 'lmdb'");
  CHECK(thrown_by([] {
          bench::point_options(point_from_texts({{"dtype", "int8"}}));
        }).find("--dtype must be") == 0);
  CHECK(thrown_by([] {
          bench::point_options(point_from_texts({{"memory_format", "nhwc"}}));
        }) == "--memory_format must be contiguous or channels_last, got 'nhwc'");
  CHECK(thrown_by([] {
          bench::point_options(point_from_texts({{"input_shape", "4x"}}));
        }) == "--input_shape takes sizes separated by commas (1,28,28), got '4x'");
  CHECK(thrown_by([] {
          bench::point_options(
              point_from_texts({{"cuda_graphs", "true"}, {"num_warmup_batches", "2"}}));
        }).find("--cuda_graphs needs --num_warmup_batches 3") == 0);
  CHECK(thrown_by([] {
          bench::point_options(point_from_texts({{"seed", "-1"}}));
        }) == "--seed must be 0 or more, got -1");
  CHECK(thrown_by([] {
          bench::point_options(point_from_texts({{"num_loader_threads", "-2"}}));
        }) == "--num_loader_threads must be 0 or more, got -2");
  // a point made by hand with a value of the wrong type
  CHECK(thrown_by([] {
          bench::point_options(Point{{"batch_size", std::string("big")}});
        }) == "parameter 'batch_size' is the string big; it must be integer");
}

TEST_CASE("parameters: what cannot apply is recorded, set parameters only, in table order") {
  const Point point = point_from_texts({{"cudnn_benchmark", "true"},
                                        {"tf32", "true"},
                                        {"data_dir", "/d"},
                                        {"num_loader_threads", "0"},
                                        {"cuda_graphs", "false"},
                                        {"cudnn_fastest", "false"}});
  auto o = bench::point_options(point);
  CHECK(bench::not_applicable(point, o) ==
        std::vector<std::string>{"data_dir (synthetic data)", "cudnn_benchmark (no cuDNN on cpu)",
                                 "cudnn_fastest (no cuDNN on cpu)",
                                 "tf32 (no TensorFloat-32 on cpu)"});
  CHECK(bench::not_applicable(Point{}, o).empty());  // nothing set, nothing recorded
  // on CUDA only cudnn_fastest stays, for another reason; the loader makes data_dir apply
  o.device = torch::Device(torch::kCUDA);
  o.data.real = true;
  CHECK(bench::not_applicable(point, o) ==
        std::vector<std::string>{"cudnn_fastest (libtorch has no such setting)"});
  o.phase = bench::Phase::kInference;
  CHECK(bench::not_applicable(point_from_texts({{"cuda_graphs", "true"}}), o) ==
        std::vector<std::string>{"cuda_graphs (the training phase's step only)"});
}

TEST_CASE("parameters: docs/benchmarks.md has a row for each, with its DLBS name") {
  const char* source = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE_MESSAGE(source != nullptr, "CTest sets ENGINE_SOURCE_DIR");
  std::ifstream in(std::string(source) + "/docs/benchmarks.md");
  REQUIRE(in.good());
  std::vector<std::string> rows;  // of the flags table; its first cell names the flags
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `--", 0) == 0) rows.push_back(line);
  }
  const auto flags_cell = [](const std::string& row) { return row.substr(0, row.find(" | ", 2)); };
  for (const auto& parameter : bench::point_parameters()) {
    if (parameter.help.empty()) continue;  // enabled, label: sweep-only
    const std::string flag =
        parameter.name == "world_size" ? "`--nproc " : "`--" + parameter.name + " ";
    const std::string bare = "`--" + parameter.name + "`";
    const std::string* row = nullptr;
    for (const auto& line : rows) {
      const std::string cell = flags_cell(line);
      if (cell.find(flag) != std::string::npos || cell.find(bare) != std::string::npos) row = &line;
    }
    REQUIRE_MESSAGE(row != nullptr, "no row for --" << parameter.name);
    if (!parameter.dlbs.empty()) {
      CHECK_MESSAGE(row->find("`" + parameter.dlbs + "`") != std::string::npos,
                    parameter.name << "'s row does not name " << parameter.dlbs);
    }
  }
}
