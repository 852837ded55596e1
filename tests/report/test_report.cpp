// engine report's pieces: tables in four formats, sparklines, one run's summary, and the
// comparison of runs with its filters and sort, on run files written by io::RunWriter.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include <cmath>

#include "engine/core/errors.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/report/compare_runs.hpp"
#include "engine/report/reports.hpp"
#include "engine/report/run_report.hpp"
#include "engine/report/run_summary.hpp"
#include "engine/report/sparkline.hpp"
#include "tests/test_support.hpp"

using namespace engine;
using report::Cell;

// How doctest prints cells and rows when a check fails.
namespace doctest {
template <>
struct StringMaker<Cell> {
  static String convert(const Cell& cell) {
    return std::holds_alternative<std::monostate>(cell) ? "(empty)"
                                                        : report::cell_text(cell).c_str();
  }
};
template <>
struct StringMaker<std::vector<Cell>> {
  static String convert(const std::vector<Cell>& row) {
    std::string text = "{";
    for (const auto& cell : row)
      text += std::string(StringMaker<Cell>::convert(cell).c_str()) + "; ";
    return (text + "}").c_str();
  }
};
}  // namespace doctest

namespace {

// A finished run: lr and batch as hyperparameters, a validation accuracy that peaks at
// `peak` in the middle.
std::string write_run(const std::string& dir, double lr, double peak, const std::string& model) {
  const auto path = io::RunWriter::new_run_path(dir, "demo");
  io::RunInfo info;
  info.name = "demo";
  io::RunWriter w(path, info);
  w.write_hparams({{"lr", lr}, {"batch_size", 32.0}, {"model", model}});
  for (int step = 1; step <= 3; ++step) {
    w.append_metrics("train", step * 10, step, step * 1.5, {{"loss", 2.0 / step}, {"lr", lr}});
    w.append_metrics(
        "validation", step * 10, step, step * 1.5 + 0.5,
        {{"loss", 1.0 + std::abs(step - 2)}, {"accuracy", step == 2 ? peak : peak - 0.1}});
  }
  w.finish(core::FileStatus::kCompleted);
  return path;
}

const report::Table& table_named(const report::Report& r, const std::string& name) {
  for (const auto& t : r.tables) {
    if (t.name == name) return t;
  }
  FAIL("no table " << name);
  return r.tables.front();
}

}  // namespace

TEST_CASE("a table renders as aligned text, CSV, Markdown and JSON records") {
  report::Table t{"t", "title", {"name", "value", "n"}, {}};
  t.rows.push_back({std::string("a,b"), 0.123456, int64_t{3}});
  t.rows.push_back({std::string("c|d"), std::nan(""), Cell{}});
  CHECK(report::render(t, report::Format::kText) ==
        "title\n"
        "name   value  n\n"
        "a,b   0.1235  3\n"
        "c|d\n");
  CHECK(report::render(t, report::Format::kCsv) == "name,value,n\n\"a,b\",0.123456,3\nc|d,,\n");
  CHECK(report::render(t, report::Format::kMarkdown) ==
        "**title**\n\n| name | value | n |\n| --- | --- | --- |\n| a,b | 0.1235 | 3 |\n"
        "| c\\|d |  |  |\n");
  const auto json = nlohmann::json::parse(report::render(t, report::Format::kJson));
  REQUIRE(json.is_array());
  CHECK(json[0]["name"] == "a,b");
  CHECK(json[0]["value"] == 0.123456);
  CHECK(json[0]["n"] == 3);
  CHECK(json[1]["value"].is_null());
  CHECK_THROWS_WITH_AS(report::parse_format("xml"),
                       "--format must be text, csv, markdown, json or dlbs, got 'xml'",
                       core::UsageError);
  CHECK(report::number_text(1234567.0) == "1234567");
  CHECK(report::number_text(0.5) == "0.5");
  CHECK(report::number_text(2.5e-7) == "2.500e-07");
}

TEST_CASE("a sparkline scales a series from its minimum to its maximum") {
  CHECK(report::sparkline({1, 2, 3, 4, 5, 6, 7, 8}) == "▁▂▃▄▅▆▇█");
  CHECK(report::sparkline({3, 3}) == "▅▅");  // a flat series sits in the middle
  CHECK(report::sparkline({1, std::nan(""), 2}) == "▁ █");
  CHECK(report::sparkline({1, 1, 2, 2}, 2) == "▁█");  // buckets average their values
  CHECK(report::sparkline({}) == "");
}

TEST_CASE("one run: the last and best value of each metric with their steps") {
  const auto dir = test::scratch_dir("report_run");
  const auto path = write_run(dir, 0.1, 0.9, "mlp");
  const auto r = report::run_report(io::read_run_file(path), true);
  const auto& facts = table_named(r, "run");
  CHECK(facts.rows[2] == std::vector<Cell>{std::string("status"), std::string("completed")});
  const auto& metrics = table_named(r, "metrics");
  CHECK(r.tables[r.main].name == "metrics");
  CHECK(metrics.columns == std::vector<std::string>{"split", "metric", "rows", "last", "step",
                                                    "best", "best step", "course"});
  // validation first; accuracy's best is its peak at step 20, loss's its minimum at step 20
  CHECK(metrics.rows[0] == std::vector<Cell>{std::string("validation"), std::string("accuracy"),
                                             int64_t{3}, 0.8, int64_t{30}, 0.9, int64_t{20},
                                             std::string("▁█▁")});
  CHECK(std::get<double>(metrics.rows[1][5]) == 1.0);
  // the learning rate has no best
  CHECK(metrics.rows[3][1] == Cell{std::string("lr")});
  CHECK(std::holds_alternative<std::monostate>(metrics.rows[3][5]));
  // CSV is the metrics table, without the sparklines (made for a terminal)
  const auto plain = report::run_report(io::read_run_file(path), false);
  CHECK(report::render(plain, report::Format::kCsv)
            .rfind("split,metric,rows,last,step,best,best step\n", 0) == 0);
  CHECK(report::better_of("validation", "top5") == report::Better::kLarger);
  CHECK(report::better_of("train", "mse") == report::Better::kSmaller);
}

TEST_CASE("several runs: the differing hyperparameters, metrics, filters and sort") {
  const auto dir = test::scratch_dir("report_compare");
  write_run(dir, 0.1, 0.8, "mlp");
  write_run(dir, 0.01, 0.95, "mlp");
  write_run(dir, 0.05, 0.9, "mlp");
  report::ReportRequest request;
  request.inputs = {dir};
  request.selection.sort = "validation.accuracy.best";
  const auto r = report::make_report(request);
  REQUIRE(r.tables.size() == 1);
  const auto& t = r.tables.front();
  CHECK(t.title == "3 runs");
  CHECK(t.column("lr") >= 0);
  CHECK(t.column("batch_size") < 0);  // the same in every run: not a column
  CHECK(t.column("model") < 0);
  const auto lr = static_cast<size_t>(t.column("lr"));
  // which run had the best validation accuracy, and with what learning rate: the first row
  CHECK(std::get<double>(t.rows[0][lr]) == 0.01);
  CHECK(std::get<double>(t.rows[2][lr]) == 0.1);

  request.selection.sort = "lr";
  request.selection.filters = {"lr<0.1", "status=completed"};
  const auto filtered = report::make_report(request).tables.front();
  CHECK(filtered.title == "2 of 3 runs");
  CHECK(std::get<double>(filtered.rows[0][lr]) == 0.01);
  CHECK(std::get<double>(filtered.rows[1][lr]) == 0.05);

  request.selection.filters = {"learning_rate<0.1"};
  CHECK_THROWS_WITH_AS(report::make_report(request),
                       doctest::Contains("--filter 'learning_rate<0.1': no column 'learning_rate'"),
                       core::UsageError);
  request.selection.filters = {"lr"};
  CHECK_THROWS_WITH_AS(report::make_report(request), doctest::Contains("is not COLUMN OP VALUE"),
                       core::UsageError);

  request.selection = {};
  request.selection.last = 1;
  CHECK(report::make_report(request).tables.front().rows.size() == 1);

  request.inputs = {dir + "/nothing-here"};
  CHECK_THROWS_AS(report::make_report(request), core::IoError);
}

namespace {

io::BenchPoint bench_point(int64_t index, const std::string& model, int64_t batch, int64_t threads,
                           double throughput, core::PointStatus status = core::PointStatus::kOk) {
  io::BenchPoint p;
  p.row.point = index;
  p.row.model = model;
  p.row.phase = "training";
  p.row.device = "cpu";
  p.row.dtype = "float32";
  p.row.batch_size = batch;
  p.row.threads = threads;
  p.row.status = status;
  p.row.throughput = throughput;
  p.row.p50_ms = 1000.0 * static_cast<double>(batch) / throughput;
  p.parameters = {
      {"model", model}, {"batch_size", batch}, {"threads", threads}, {"num_batches", int64_t{10}}};
  p.batch_ms = {p.row.p50_ms, p.row.p50_ms};
  return p;
}

}  // namespace

TEST_CASE("a hyperparameter named as a column of the table is kept apart by a prefix") {
  // a hyperparameter called steps (and one called train.loss) beside the runs' own columns:
  // two steps columns in text and CSV, one of them gone from JSON, before
  const auto dir = test::scratch_dir("report_hparam_names");
  for (const double steps : {100.0, 200.0}) {
    const auto path = io::RunWriter::new_run_path(dir, "demo");
    io::RunInfo info;
    info.name = "demo";
    io::RunWriter w(path, info);
    w.write_hparams({{"steps", steps}, {"train.loss", steps / 100}, {"lr", 0.1}});
    w.append_metrics("train", 10, 1, 1.0, {{"loss", 0.5}});
    w.finish(core::FileStatus::kCompleted);
  }
  report::ReportRequest request;
  request.inputs = {dir};
  const auto t = report::make_report(request).tables.front();
  CHECK(std::count(t.columns.begin(), t.columns.end(), "steps") == 1);
  REQUIRE(t.column("hp.steps") >= 0);
  REQUIRE(t.column("hp.train.loss") >= 0);
  CHECK(t.column("lr") < 0);  // the same in both runs
  std::vector<double> steps;
  for (const auto& row : t.rows) steps.push_back(std::get<double>(row[t.column("hp.steps")]));
  std::sort(steps.begin(), steps.end());
  CHECK(steps == std::vector<double>{100, 200});
  const std::string json = report::render(t, report::Format::kJson);
  CHECK(json.find("\"hp.steps\": 100.0") != std::string::npos);
  CHECK(json.find("\"steps\": 10,") != std::string::npos);  // the runs' own: 10 steps each
}

TEST_CASE("benchmark points, listed and pivoted into DLBS's views") {
  const auto dir = test::scratch_dir("report_bench");
  const auto path = dir + "/sweep.h5";
  {
    io::BenchInfo info;
    info.name = "sweep";
    io::BenchFile file(path, info);
    file.write_point(bench_point(0, "mlp", 32, 1, 1000));
    file.write_point(bench_point(1, "mlp", 32, 2, 1600));
    file.write_point(bench_point(2, "mlp", 64, 1, 1500));
    file.write_point(bench_point(3, "mlp", 64, 2, 2400));
    file.write_point(bench_point(4, "cnn", 32, 1, 100));
    file.write_point(bench_point(5, "cnn", 64, 1, 0, core::PointStatus::kFailed));
    file.finish(core::FileStatus::kCompleted);
  }
  report::ReportRequest request;
  request.inputs = {dir};
  auto points = report::make_report(request).tables.front();
  CHECK(points.title == "6 benchmark points in 1 file");
  CHECK(points.column("num_batches") >= 0);  // the points' other parameters are columns too
  request.selection.filters = {"status=ok", "model=mlp"};
  CHECK(report::make_report(request).tables.front().title == "4 of 6 benchmark points in 1 file");

  request.selection.filters = {"threads=1"};
  request.pivot = report::Pivot{};  // rows model, columns batch_size, throughput
  auto t = report::make_report(request).tables.front();
  CHECK(t.columns == std::vector<std::string>{"model", "batch_size=32", "batch_size=64"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == std::vector<Cell>{std::string("mlp"), 1000.0, 1500.0});
  CHECK(t.rows[1] == std::vector<Cell>{std::string("cnn"), 100.0, Cell{}});  // failed: empty

  request.pivot->value = "speedup";
  t = report::make_report(request).tables.front();
  CHECK(t.rows[0] == std::vector<Cell>{std::string("mlp"), 1.0, 1.5});

  // threads as columns: speedup and efficiency against one thread
  request.selection.filters = {"model=mlp"};
  request.pivot = report::Pivot{{"model", "batch_size"}, "threads", "efficiency"};
  t = report::make_report(request).tables.front();
  CHECK(t.columns == std::vector<std::string>{"model", "batch_size", "threads=1", "threads=2"});
  CHECK(t.rows[0] == std::vector<Cell>{std::string("mlp"), int64_t{32}, 1.0, 0.8});
  CHECK(t.rows[1] == std::vector<Cell>{std::string("mlp"), int64_t{64}, 1.0, 0.8});

  request.pivot = report::Pivot{{"model"}, "batch", "throughput"};
  CHECK_THROWS_WITH_AS(report::make_report(request),
                       doctest::Contains("--cols: no column 'batch' in the benchmark points"),
                       core::UsageError);
  CHECK(report::split_columns("model,phase") == std::vector<std::string>{"model", "phase"});
}

TEST_CASE("benchmark points: a setting that cannot apply to the point shows n/a") {
  io::BenchContents file{"a.h5", {}, {}};
  auto cpu = bench_point(0, "mlp", 32, 1, 1000);
  cpu.parameters["cudnn_benchmark"] = true;
  cpu.parameters["cuda_graphs"] = false;
  cpu.details["not_applicable"] =
      std::string("cudnn_benchmark (no cuDNN on cpu), cudnn_fastest (no cuDNN on cpu)");
  file.points = {cpu};
  const auto t = report::bench_points({file});
  CHECK(t.rows[0][static_cast<size_t>(t.column("cudnn_benchmark"))] == Cell{std::string("n/a")});
  CHECK(t.rows[0][static_cast<size_t>(t.column("cuda_graphs"))] == Cell{std::string("false")});
}

TEST_CASE("engine eval's files are a table of their own, never ranked with training runs") {
  const auto dir = test::scratch_dir("report_eval");
  write_run(dir, 0.1, 0.8, "mlp");
  {
    const auto path = io::RunWriter::new_run_path(dir + "/eval", "demo");
    io::RunInfo info;
    info.name = "demo";
    info.command = "engine eval demo.lua --checkpoint ckpt-3.h5";
    io::RunWriter w(path, info);
    w.append_metrics("validation", 30, 3, 1.0, {{"loss", 0.1}, {"accuracy", 0.99}});
    w.finish(core::FileStatus::kCompleted);
  }
  report::ReportRequest request;
  request.inputs = {dir};
  request.selection.sort = "validation.accuracy.best";
  const auto made = report::make_report(request);
  REQUIRE(made.tables.size() == 2);
  CHECK(made.tables[0].name == "runs");
  CHECK(made.tables[0].rows.size() == 1);
  CHECK(made.tables[1].name == "evaluations");
  CHECK(made.tables[1].title.rfind("engine eval: 1 run", 0) == 0);
}

TEST_CASE("a pivot never hides a point: what tells points apart splits the rows") {
  io::BenchContents first{"a.h5", {}, {}}, second{"b.h5", {}, {}};
  auto training = bench_point(0, "mlp", 32, 1, 1000);
  auto inference = bench_point(1, "mlp", 32, 1, 4000);
  inference.row.phase = "inference";
  auto seed2 = bench_point(2, "mlp", 64, 1, 1500);
  auto seed3 = bench_point(3, "mlp", 64, 1, 1400);
  seed2.parameters["seed"] = int64_t{2};
  seed3.parameters["seed"] = int64_t{3};
  first.points = {training, inference};
  report::Pivot request;  // rows model, columns batch_size, throughput

  // two phases of one model and batch: a row each, and the title says why
  auto t = report::pivot(report::bench_points({first}), request);
  CHECK(t.columns == std::vector<std::string>{"model", "phase", "batch_size=32"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == std::vector<Cell>{std::string("mlp"), std::string("training"), 1000.0});
  CHECK(t.rows[1] == std::vector<Cell>{std::string("mlp"), std::string("inference"), 4000.0});
  CHECK(t.title.find("rows split by phase") != std::string::npos);

  // two seeds: a parameter of the sweep's own tells them apart
  first.points = {seed2, seed3};
  t = report::pivot(report::bench_points({first}), request);
  CHECK(t.columns == std::vector<std::string>{"model", "seed", "batch_size=64"});
  CHECK(t.rows.size() == 2);
  // the same point in two files: the file does
  first.points = {training};
  second.points = {training};
  t = report::pivot(report::bench_points({first, second}), request);
  CHECK(t.columns == std::vector<std::string>{"model", "file", "batch_size=32"});
  CHECK(t.rows.size() == 2);
  // nothing tells them apart: refused, naming the points
  first.points = {training, training};
  first.points[1].row.point = 1;
  CHECK_THROWS_WITH_AS(report::pivot(report::bench_points({first}), request),
                       "points 0 and 1 of a.h5 have the same parameters: no column tells them "
                       "apart in the pivot",
                       core::UsageError);
  // a pivot that needs no split is as asked
  first.points = {training, seed2};
  t = report::pivot(report::bench_points({first}), request);
  CHECK(t.columns == std::vector<std::string>{"model", "batch_size=32", "batch_size=64"});
  CHECK(t.title.find("split") == std::string::npos);
}

TEST_CASE("efficiency above 1 is flagged in the pivot's title, not capped") {
  io::BenchContents file{"a.h5", {}, {}};
  file.points = {bench_point(0, "mlp", 32, 1, 1000), bench_point(1, "mlp", 32, 2, 2200),
                 bench_point(2, "cnn", 32, 1, 100), bench_point(3, "cnn", 32, 2, 150)};
  const report::Pivot request{{"model"}, "threads", "efficiency"};
  const auto t = report::pivot(report::bench_points({file}), request);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == std::vector<Cell>{std::string("mlp"), 1.0, 1.1});  // kept as measured
  CHECK(t.title.find("ABOVE 1 (more than linear: check it against the noise): mlp threads=2 "
                     "(1.1)") != std::string::npos);
  CHECK(t.title.find("cnn threads=2") == std::string::npos);  // 0.75
  file.points[1].row.scaling_efficiency = 1.1;
  CHECK(report::bench_points({file}).title ==
        "4 benchmark points in 1 file; scaling_efficiency ABOVE 1 (more than linear: check it "
        "against the noise) at 1 point");
}

TEST_CASE("--value with several columns: a pivot table each") {
  const auto dir = test::scratch_dir("report_values");
  {
    io::BenchInfo info;
    info.name = "sweep";
    io::BenchFile file(dir + "/sweep.h5", info);
    file.write_point(bench_point(0, "mlp", 32, 1, 1000));
    file.write_point(bench_point(1, "mlp", 64, 1, 1500));
    file.finish(core::FileStatus::kCompleted);
  }
  report::ReportRequest request;
  request.inputs = {dir, dir + "/sweep.h5"};  // one file named twice is read once
  request.pivot = report::Pivot{};
  request.values = {"throughput", "p50_ms"};
  const auto made = report::make_report(request);
  REQUIRE(made.tables.size() == 2);
  CHECK(made.tables[0].name == "pivot_throughput");
  CHECK(made.tables[1].name == "pivot_p50_ms");
  CHECK(made.tables[0].rows.size() == 1);
  CHECK(made.tables[1].rows[0][1] == Cell{32.0});  // 1000 * 32 / 1000
  request.format = report::Format::kCsv;
  CHECK_THROWS_WITH_AS(report::make_report(request),
                       doctest::Contains("CSV holds one: give one --value"), core::UsageError);
}

TEST_CASE("--compare: a change is a regression or an improvement only beyond the noise") {
  const auto dir = test::scratch_dir("report_bench_compare");
  // batch times around `ms` with +-spread, 20 of them
  const auto point = [](int64_t index, int64_t batch, double ms, double spread) {
    auto p = bench_point(index, "mlp", batch, 1, 1000.0 * static_cast<double>(batch) / ms);
    p.row.point_id = "id" + std::to_string(batch);
    p.batch_ms.clear();
    for (int i = 0; i < 20; ++i) p.batch_ms.push_back(ms + spread * ((i % 5) - 2) / 2.0);
    p.row.p50_ms = ms;
    return p;
  };
  const auto write = [&](const std::string& name, const std::vector<io::BenchPoint>& points) {
    io::BenchInfo info;
    info.name = name;
    io::BenchFile file(dir + "/" + name + ".h5", info);
    for (const auto& p : points) file.write_point(p);
    file.finish(core::FileStatus::kCompleted);
    return dir + "/" + name + ".h5";
  };
  const auto before = write("before", {point(0, 8, 10.0, 0.2), point(1, 16, 20.0, 0.2),
                                       point(2, 32, 40.0, 8.0), point(3, 64, 80.0, 0.2)});
  const auto after = write("after", {point(0, 8, 12.0, 0.2), point(1, 16, 18.0, 0.2),
                                     point(2, 32, 42.0, 8.0), point(3, 128, 160.0, 0.2)});
  report::ReportRequest request;
  request.inputs = {before, after};
  request.compare = true;
  const auto t = report::make_report(request).tables.front();
  CHECK(t.title == before + " -> " + after + ": 1 regression, 1 improvement, 1 within noise");
  const auto verdict = static_cast<size_t>(t.column("verdict"));
  const auto change = static_cast<size_t>(t.column("p50 change %"));
  REQUIRE(t.rows.size() == 5);
  CHECK(t.rows[0][verdict] == Cell{std::string("regression")});  // 10 -> 12 ms, noise ~0.2
  CHECK(std::get<double>(t.rows[0][change]) == doctest::Approx(20.0));
  CHECK(t.rows[1][verdict] == Cell{std::string("improvement")});   // 20 -> 18 ms
  CHECK(t.rows[2][verdict] == Cell{std::string("within noise")});  // 40 -> 42 ms, +-8 ms batches
  CHECK(t.rows[3][verdict] == Cell{std::string("only after")});
  CHECK(t.rows[4][verdict] == Cell{std::string("only before")});

  request.selection.filters = {"verdict=regression"};
  CHECK(report::make_report(request).tables.front().rows.size() == 1);
  request.inputs = {before};
  CHECK_THROWS_WITH_AS(report::make_report(request),
                       "--compare takes two benchmark files, BEFORE.h5 AFTER.h5 (got 1)",
                       core::UsageError);
}
