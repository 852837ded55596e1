// Sweep expansion: each construct against the points written out by hand.
#include <doctest/doctest.h>

#include "engine/bench/parameters.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/core/errors.hpp"

using namespace engine;
using bench::Value;

namespace {

// A small schema: what these tests need, with defaults.
const bench::Schema kSchema = {
    {"model", std::string()},     {"batch_size", int64_t{1}}, {"phase", std::string("training")},
    {"num_batches", int64_t{10}}, {"enabled", true},          {"label", std::string()}};

// The points as "model/batch/phase/num_batches" strings, in run order; inactive ones marked.
std::vector<std::string> summary(const std::vector<bench::PlannedPoint>& points) {
  std::vector<std::string> out;
  for (const auto& p : points) {
    std::string s = bench::value_text(p.params.at("model")) + "/" +
                    bench::value_text(p.params.at("batch_size")) + "/" +
                    bench::value_text(p.params.at("phase")) + "/" +
                    bench::value_text(p.params.at("num_batches"));
    const auto label = bench::value_text(p.params.at("label"));
    if (!label.empty()) s += "/" + label;
    if (!p.active) s += " inactive";
    out.push_back(s);
  }
  return out;
}

bench::SweepSpec two_by_two() {
  bench::SweepSpec spec;
  spec.name = "t";
  spec.parameters["num_batches"] = Value(int64_t{5});
  spec.variables["model"] = {std::string("a"), std::string("b")};
  spec.variables["batch_size"] = {int64_t{8}, int64_t{16}};
  return spec;
}

std::string error_of(const bench::SweepSpec& spec, const bench::Overrides& o = {}) {
  try {
    bench::expand(spec, kSchema, o);
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("variables: the Cartesian product, the first of `order` outermost") {
  auto spec = two_by_two();
  spec.order = {"model", "batch_size"};
  CHECK(summary(bench::expand(spec, kSchema)) ==
        std::vector<std::string>{"a/8/training/5", "a/16/training/5", "b/8/training/5",
                                 "b/16/training/5"});
  spec.order = {"batch_size"};  // the rest follow by name
  CHECK(summary(bench::expand(spec, kSchema)) ==
        std::vector<std::string>{"a/8/training/5", "b/8/training/5", "a/16/training/5",
                                 "b/16/training/5"});
  spec.order = {};  // by name: batch_size, then model
  CHECK(summary(bench::expand(spec, kSchema)).front() == "a/8/training/5");
  CHECK(summary(bench::expand(spec, kSchema))[1] == "b/8/training/5");
}

TEST_CASE("parameters alone: one point with the defaults filled in") {
  bench::SweepSpec spec;
  spec.parameters["model"] = Value(std::string("m"));
  const auto points = bench::expand(spec, kSchema);
  CHECK(summary(points) == std::vector<std::string>{"m/1/training/10"});
  CHECK(points[0].made_by == "variables");
  CHECK(points[0].id.size() == 16);
}

TEST_CASE("extensions: exact values, lists, patterns, predicates, in order") {
  auto spec = two_by_two();
  spec.order = {"model", "batch_size"};
  bench::Extension exact;
  exact.condition["model"].values = {std::string("a")};
  exact.parameters["num_batches"] = Value(int64_t{1});
  bench::Extension list;  // sees what `exact` made: a's num_batches is 1 now
  list.condition["num_batches"].kind = bench::Test::Kind::kAnyOf;
  list.condition["num_batches"].values = {int64_t{1}, int64_t{99}};
  list.condition["batch_size"].values = {int64_t{16}};
  list.parameters["phase"] = Value(std::string("inference"));
  bench::Extension pattern;
  pattern.condition["model"].kind = bench::Test::Kind::kPattern;
  pattern.condition["model"].pattern = "^b$";
  pattern.parameters["label"] = Value(std::string("bee"));
  bench::Extension predicate;
  predicate.condition["batch_size"].kind = bench::Test::Kind::kPredicate;
  predicate.condition["batch_size"].predicate = [](const Value& v, const bench::Getter& get) {
    return std::get<int64_t>(v) == 8 && bench::value_text(get("model")) == "b";
  };
  predicate.parameters["num_batches"] = Value(int64_t{2});
  spec.extensions = {exact, list, pattern, predicate};
  const auto points = bench::expand(spec, kSchema);
  CHECK(summary(points) == std::vector<std::string>{"a/8/training/1", "a/16/inference/1",
                                                    "b/8/training/2/bee", "b/16/training/5/bee"});
  CHECK(points[0].made_by == "extensions[1]");
  CHECK(points[1].made_by == "extensions[2]");
  CHECK(points[2].made_by == "extensions[4]");
}

TEST_CASE("extensions: a whole-point condition and cases forking a point") {
  auto spec = two_by_two();
  spec.order = {"model", "batch_size"};
  bench::Extension fork;
  fork.when = [](const bench::Getter& get) { return bench::value_text(get("model")) == "b"; };
  bench::Params one, two;
  one["label"] = Value(std::string("x"));
  two["label"] = Value(std::string("y"));
  two["phase"] = Value(std::string("inference"));
  fork.cases = {one, two};
  spec.extensions = {fork};
  const auto points = bench::expand(spec, kSchema);
  CHECK(summary(points) == std::vector<std::string>{"a/8/training/5", "a/16/training/5",
                                                    "b/8/training/5/x", "b/8/inference/5/y",
                                                    "b/16/training/5/x", "b/16/inference/5/y"});
  CHECK(points[3].made_by == "extensions[1].cases[2]");
}

TEST_CASE("computed parameters: functions of the point, resolved on demand") {
  auto spec = two_by_two();
  spec.order = {"model", "batch_size"};
  bench::Param computed;
  computed.compute = [](const bench::Getter& get) {
    return Value(int64_t{1000} / std::get<int64_t>(get("batch_size")));
  };
  spec.parameters["num_batches"] = computed;
  bench::Param label;  // depends on another computed parameter
  label.compute = [](const bench::Getter& get) {
    return Value(bench::value_text(get("model")) + "-" + bench::value_text(get("num_batches")));
  };
  spec.parameters["label"] = label;
  CHECK(summary(bench::expand(spec, kSchema)) ==
        std::vector<std::string>{"a/8/training/125/a-125", "a/16/training/62/a-62",
                                 "b/8/training/125/b-125", "b/16/training/62/b-62"});

  bench::Param loop;
  loop.compute = [](const bench::Getter& get) { return get("num_batches"); };
  spec.parameters["num_batches"] = loop;
  CHECK(error_of(spec).find("depends on itself: num_batches -> num_batches") != std::string::npos);
}

TEST_CASE("enabled = false and where make points inactive, listed but not run") {
  auto spec = two_by_two();
  spec.order = {"model", "batch_size"};
  bench::Extension off;
  off.condition["model"].values = {std::string("a")};
  off.condition["batch_size"].values = {int64_t{8}};
  off.parameters["enabled"] = Value(false);
  spec.extensions = {off};
  spec.where = [](const bench::Getter& get) {
    return std::get<int64_t>(get("batch_size")) < 16 || bench::value_text(get("model")) == "a";
  };
  const auto points = bench::expand(spec, kSchema);
  CHECK(summary(points) == std::vector<std::string>{"a/8/training/5 inactive", "a/16/training/5",
                                                    "b/8/training/5", "b/16/training/5 inactive"});
  CHECK(points[0].inactive_reason == "enabled = false (extensions[1])");
  CHECK(points[3].inactive_reason == "where");
  spec.where = [](const bench::Getter&) { return false; };
  CHECK(error_of(spec).find("no point to run") != std::string::npos);
}

TEST_CASE("--set and --var from the command line") {
  auto spec = two_by_two();
  spec.order = {"model", "batch_size"};
  bench::Extension ext;  // --set on a parameter has the last word over extensions
  ext.parameters["num_batches"] = Value(int64_t{7});
  spec.extensions = {ext};
  bench::Overrides o;
  o.set = {{"model", "b"}, {"num_batches", "3"}};
  o.var = {{"phase", "training,inference"}};
  CHECK(summary(bench::expand(spec, kSchema, o)) ==
        std::vector<std::string>{"b/8/training/3", "b/8/inference/3", "b/16/training/3",
                                 "b/16/inference/3"});
  CHECK(bench::split_assignment("a=b=c", "--set") ==
        std::make_pair(std::string("a"), std::string("b=c")));
  CHECK_THROWS_AS(bench::split_assignment("novalue", "--set"), core::UsageError);
  o.set = {{"modle", "b"}};
  CHECK(error_of(spec, o).find("--set 'modle'") != std::string::npos);
}

TEST_CASE("match conditions: DLBS's regular expressions, from the start, with captures") {
  bench::SweepSpec spec;
  spec.variables["model"] = {std::string("resnet18"), std::string("resnet50"),
                             std::string("alexnet"), std::string("alexnet_owt"),
                             std::string("net")};
  spec.order = {"model"};
  bench::Extension depth;  // resnet18: group 1 is "18"
  depth.condition["model"].kind = bench::Test::Kind::kMatch;
  depth.condition["model"].pattern = "resnet([0-9]+)(x)?";
  depth.parameters["label"].compute = [](const bench::Getter& get) {
    return Value(std::string("depth ") + bench::value_text(get("_match_model_1")) + "/" +
                 bench::value_text(get("_match_model_2")) + "/" +
                 bench::value_text(get("_match_model_0")));
  };
  bench::Extension prefix;  // as Python's re.match: 'alexnet' takes alexnet_owt too
  prefix.condition["model"].kind = bench::Test::Kind::kMatch;
  prefix.condition["model"].pattern = "alexnet";
  prefix.parameters["num_batches"] = Value(int64_t{3});
  bench::Extension anchored;  // from the start: 'net' is not found inside resnet18
  anchored.condition["model"].kind = bench::Test::Kind::kMatch;
  anchored.condition["model"].pattern = "net";
  anchored.parameters["phase"] = Value(std::string("inference"));
  spec.extensions = {depth, prefix, anchored};
  const auto points = bench::expand(spec, kSchema);
  CHECK(summary(points) == std::vector<std::string>{
                               "resnet18/1/training/10/depth 18//resnet18",
                               "resnet50/1/training/10/depth 50//resnet50", "alexnet/1/training/3",
                               "alexnet_owt/1/training/3", "net/1/inference/10"});
  CHECK(bench::value_text(points[3].params.at("_match_model_0")) == "alexnet_owt");

  spec.extensions = {depth};
  spec.extensions[0].condition["model"].pattern = "resnet(";
  CHECK(error_of(spec).find("the pattern 'resnet(' is not a regular expression") !=
        std::string::npos);
}

TEST_CASE("DLBS's -P and -V: under the variables and extensions, and variables that loop") {
  auto spec = two_by_two();
  spec.order = {"model", "batch_size"};
  bench::Extension ext;
  ext.condition["model"].values = {std::string("a")};
  ext.parameters["num_batches"] = Value(int64_t{7});
  spec.extensions = {ext};
  bench::Overrides o;
  // -P on a variable leaves it looping; -P under an extension loses to it
  o.dlbs_params = {{"model", Value(std::string("z"))}, {"num_batches", Value(int64_t{2})}};
  CHECK(summary(bench::expand(spec, kSchema, o)) ==
        std::vector<std::string>{"a/8/training/7", "a/16/training/7", "b/8/training/2",
                                 "b/16/training/2"});
  // -V with one value is a variable of one value; a new one loops innermost
  o.dlbs_params.clear();
  o.dlbs_vars = {{"batch_size", {Value(int64_t{32})}},
                 {"phase", {Value(std::string("training")), Value(std::string("inference"))}}};
  CHECK(summary(bench::expand(spec, kSchema, o)) ==
        std::vector<std::string>{"a/32/training/7", "a/32/inference/7", "b/32/training/5",
                                 "b/32/inference/5"});
  // the engine's --set has the last word, where -P has the first
  o.dlbs_vars.clear();
  o.set = {{"num_batches", "4"}};
  CHECK(summary(bench::expand(spec, kSchema, o)).front() == "a/8/training/4");
  o.set.clear();
  o.dlbs_params = {{"modle", Value(std::string("z"))}};
  CHECK(error_of(spec, o).find("-P 'modle'") != std::string::npos);
}

TEST_CASE("a data_dir means real data unless data says otherwise, as in DLBS") {
  bench::SweepSpec spec;
  spec.parameters["model"] = Value(std::string("mlp"));
  spec.variables["data_dir"] = {std::string(""), std::string("/data/mnist")};
  spec.order = {"data_dir"};
  auto points = bench::expand(spec, bench::point_schema());
  REQUIRE(points.size() == 2);
  CHECK(bench::value_text(points[0].params.at("data")) == "synthetic");
  CHECK(bench::value_text(points[1].params.at("data")) == "real");
  spec.parameters["data"] = Value(std::string("synthetic"));  // said: kept
  points = bench::expand(spec, bench::point_schema());
  CHECK(bench::value_text(points[1].params.at("data")) == "synthetic");
}

TEST_CASE("errors name the key and where it is written") {
  auto spec = two_by_two();
  spec.locate = [](const std::string& section, const std::string& key) {
    return " (at " + section + "/" + key + ")";
  };
  bench::Extension misspelt;
  misspelt.condition["modle"].values = {std::string("a")};
  spec.extensions = {misspelt};
  const auto unknown = error_of(spec);
  CHECK(unknown.find("condition on 'modle' in extensions[1] (at extensions[1]/modle)") !=
        std::string::npos);
  CHECK(unknown.find("not a benchmark parameter") != std::string::npos);

  spec.extensions.clear();
  spec.parameters["forward_only"] = Value(true);
  CHECK(error_of(spec).find("phase = 'inference'") != std::string::npos);
  spec.parameters.erase("forward_only");
  spec.parameters["_mine"] = Value(int64_t{1});  // the script's own: allowed
  CHECK(error_of(spec) == "no error");

  spec.variables["batch_size"] = {};
  CHECK(error_of(spec).find("variable 'batch_size' (at variables/batch_size) has no values") !=
        std::string::npos);
  spec.variables["batch_size"] = {int64_t{8}};
  spec.order = {"phase"};
  CHECK(error_of(spec).find("not a variable") != std::string::npos);
  spec.order = {};

  spec.parameters["num_batches"] = Value(std::string("many"));
  CHECK(error_of(spec).find("'num_batches' of point 1 (variables) is the string many; it must "
                            "be an integer") != std::string::npos);
  spec.parameters["num_batches"] = Value(int64_t{5});

  bench::Extension bad_pattern;
  bad_pattern.condition["model"].kind = bench::Test::Kind::kPattern;
  bad_pattern.condition["model"].pattern = "([";
  spec.extensions = {bad_pattern};
  CHECK(error_of(spec).find("is not a regular expression") != std::string::npos);
}

TEST_CASE("two identical points are an error naming what made them") {
  auto spec = two_by_two();
  spec.order = {"model", "batch_size"};
  bench::Extension same;  // both cases leave the point as it was
  same.condition["model"].values = {std::string("b")};
  same.cases = {bench::Params{}, bench::Params{{"num_batches", Value(int64_t{5})}}};
  spec.extensions = {same};
  const auto message = error_of(spec);
  CHECK(message.find("points 3 and 4 are the same point") != std::string::npos);
  CHECK(message.find("extensions[1].cases[1]") != std::string::npos);
  CHECK(message.find("extensions[1].cases[2]") != std::string::npos);
}

TEST_CASE("point identity: parameters but not enabled; batch families") {
  bench::Point a{{"model", std::string("m")}, {"batch_size", int64_t{8}}, {"enabled", true}};
  bench::Point b = a;
  b["enabled"] = false;
  CHECK(bench::point_id(a) == bench::point_id(b));
  b["batch_size"] = int64_t{16};
  CHECK(bench::point_id(a) != bench::point_id(b));
  const auto& family = bench::kDefaultOomFamily;
  CHECK(bench::batch_family_id(a, family) == bench::batch_family_id(b, family));
  // what the family leaves out (the batches timed, an extension's choice) keeps a point in it
  b["num_batches"] = int64_t{5};
  CHECK(bench::batch_family_id(a, family) == bench::batch_family_id(b, family));
  CHECK(bench::batch_family_id(a, {"model", "num_batches"}) !=
        bench::batch_family_id(b, {"model", "num_batches"}));
  b["model"] = std::string("n");
  CHECK(bench::batch_family_id(a, family) != bench::batch_family_id(b, family));
}

TEST_CASE("oom_family: the sweep's own, checked; the default otherwise") {
  bench::SweepSpec spec;
  spec.name = "s";
  spec.parameters["model"] = Value(std::string("mlp"));
  spec.variables["batch_size"] = {Value(int64_t{8}), Value(int64_t{16})};
  CHECK(bench::oom_family(spec) == bench::kDefaultOomFamily);
  spec.oom_family = {"model", "phase"};
  CHECK(bench::oom_family(spec) == std::vector<std::string>{"model", "phase"});
  CHECK(error_of(spec) == "no error");
  spec.oom_family = {"model", "batch_size"};
  CHECK(error_of(spec).find("oom_family names 'batch_size'") != std::string::npos);
  spec.oom_family = {"modle"};
  CHECK(error_of(spec).find("oom_family's 'modle' in oom_family is not a benchmark parameter") !=
        std::string::npos);
}

TEST_CASE("values: text, parsing, equality") {
  CHECK(bench::value_text(Value(int64_t{16})) == "16");
  CHECK(bench::value_text(Value(0.5)) == "0.5");
  CHECK(bench::value_text(Value(true)) == "true");
  CHECK(std::get<int64_t>(bench::parse_value("16")) == 16);
  CHECK(std::get<double>(bench::parse_value("0.5")) == 0.5);
  CHECK(std::get<bool>(bench::parse_value("false")) == false);
  CHECK(std::get<std::string>(bench::parse_value("resnet18")) == "resnet18");
  CHECK(bench::values_equal(Value(int64_t{16}), Value(16.0)));
  CHECK_FALSE(bench::values_equal(Value(int64_t{16}), Value(std::string("16"))));
}

TEST_CASE("point flags: what a child process is given") {
  bench::Point p = {
      {"model", std::string("mlp")}, {"batch_size", int64_t{8}}, {"enabled", true},
      {"label", std::string("x")},   {"_mine", int64_t{3}},      {"data_dir", std::string()},
      {"data_shuffle", false}};
  CHECK(bench::point_flags(p) ==
        std::vector<std::string>{"--batch_size", "8", "--data_shuffle", "false", "--model", "mlp"});
  // every schema parameter but enabled and label is a flag of engine bench
  CHECK(bench::point_schema().count("num_loader_threads") == 1);
}
