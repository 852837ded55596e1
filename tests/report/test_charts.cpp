// engine report's charts: round ticks, the SVG a figure becomes, the charts of runs and of
// benchmark points, the files --plot writes (PNG through rsvg-convert) and the --html page.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "engine/core/errors.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/report/bench_report.hpp"
#include "engine/report/chart.hpp"
#include "engine/report/chart_file.hpp"
#include "engine/report/html.hpp"
#include "engine/report/plots.hpp"
#include "engine/report/reports.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

io::RunFile run_with(double lr, const std::vector<double>& losses) {
  io::RunFile run;
  run.path = "runs/demo/" + std::to_string(lr) + ".h5";
  run.attributes["name"] = std::string("demo");
  run.hparams = {{"lr", lr}, {"batch_size", 32.0}};
  auto& train = run.metrics["train"];
  for (size_t i = 0; i < losses.size(); ++i) {
    train.step.push_back(static_cast<int64_t>(10 * (i + 1)));
    train.epoch.push_back(1);
    train.time.push_back(static_cast<double>(i));
  }
  train.series["loss"] = losses;
  train.series["lr"] = std::vector<double>(losses.size(), lr);
  return run;
}

report::Table points_table() {
  report::Table t{
      "points", "points", {"model", "phase", "batch_size", "threads", "status", "throughput"}, {}};
  for (const char* phase : {"training", "inference"}) {
    for (int64_t batch : {16, 32, 64}) {
      const double scale = std::string(phase) == "training" ? 1 : 3;
      t.rows.push_back({std::string("mlp"), std::string(phase), batch, int64_t{2},
                        std::string("ok"), scale * 100.0 * static_cast<double>(batch)});
      t.rows.push_back({std::string("cnn"), std::string(phase), batch, int64_t{2},
                        std::string(batch == 64 ? "failed" : "ok"),
                        scale * static_cast<double>(batch)});
    }
  }
  return t;
}

}  // namespace

TEST_CASE("a log2 axis labels its ticks exactly") {
  CHECK(report::power_of_two_text(1) == "1");
  CHECK(report::power_of_two_text(16384) == "16384");
  CHECK(report::power_of_two_text(0.5) == "0.5");
  CHECK(report::power_of_two_text(0.125) == "0.125");        // was "0.1"
  CHECK(report::power_of_two_text(0.015625) == "0.015625");  // was "0.02"
  CHECK(report::power_of_two_text(std::exp2(-10)) == "2^-10");
  // lr from 2^-6 to 0.25 on a log axis: every label is its tick's value
  report::Chart chart{"lr", "lr", "loss", {}, true, false};
  chart.lines.push_back({"x", {0.015625, 0.0625, 0.2}, {1, 2, 3}});
  const auto svg = report::render_svg(report::Figure{"ticks", {chart}});
  for (const char* label : {">0.015625<", ">0.03125<", ">0.0625<", ">0.125<", ">0.25<"}) {
    CHECK_MESSAGE(svg.find(label) != std::string::npos, label);
  }
  CHECK(svg.find(">0.02<") == std::string::npos);
}

TEST_CASE("titles fit: the figure's wraps, a chart's is shortened") {
  const std::string long_title(40, 'x');
  std::string title = "throughput (samples/s) against batch size (samples), 24 benchmark points";
  title += " in 3 files; " + long_title + " " + long_title;
  report::Chart chart{std::string(120, 'c'), "batch", "throughput", {}, false, true};
  chart.lines.push_back({"a", {1, 2}, {3, 4}});
  const auto svg = report::render_svg(report::Figure{title, {chart}});
  const std::regex text_line(
      R"re(<text x="([0-9.]+)"[^>]*font-size="(1[47])"[^>]*>([^<]*)</text>)re");
  int title_lines = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_line);
       it != std::sregex_iterator(); ++it) {
    const double size = std::stod((*it)[2]);
    const std::string text = (*it)[3];
    CHECK_MESSAGE(0.6 * size * static_cast<double>(text.size()) <= 520 + 1e-9, text);
    title_lines += size == 17;
  }
  CHECK(title_lines >= 2);
  CHECK(svg.find(std::string(120, 'c')) == std::string::npos);
}

TEST_CASE("ticks are round numbers that cover the range") {
  CHECK(report::nice_ticks(0, 1, 5) ==
        std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
  const auto ticks = report::nice_ticks(3, 97, 5);
  CHECK(ticks.front() == 0);
  CHECK(ticks.back() == 100);
  CHECK(ticks[1] == 20);
  CHECK(report::nice_ticks(2, 2, 5) == std::vector<double>{2});

  CHECK(report::tick_text(0, 50000) == "0");
  CHECK(report::tick_text(150000, 50000) == "150k");
  CHECK(report::tick_text(1500000, 500000) == "1.5M");
  CHECK(report::tick_text(0.25, 0.05) == "0.25");
  CHECK(report::tick_text(0.4, 0.2) == "0.4");
  CHECK(report::tick_text(1024, 1) == "1024");
  CHECK(report::tick_text(-0.5, 0.5) == "-0.5");
}

TEST_CASE("a figure becomes an SVG with a title, axes, a legend and a path per line") {
  report::Figure figure{"a <figure> & its title", {}};
  report::Chart chart{"train loss", "step", "loss", {}, false, false};
  chart.lines.push_back({"lr=0.1", {1, 2, 3, 4}, {2.0, 1.5, NAN, 1.0}});  // NaN breaks the line
  chart.lines.push_back({"lr=0.01", {1, 2, 3, 4}, {2.2, 2.0, 1.9, 1.8}});
  figure.charts.push_back(chart);
  chart.title = "validation loss";
  chart.lines.pop_back();
  figure.charts.push_back(chart);
  const std::string svg = report::render_svg(figure);

  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find("a &lt;figure&gt; &amp; its title") != std::string::npos);
  CHECK(svg.find("<figure>") == std::string::npos);
  CHECK(count_of(svg, ">lr=0.1</text>") == 1);  // one legend for the figure
  CHECK(count_of(svg, ">lr=0.01</text>") == 1);
  CHECK(count_of(svg, "<path ") == 3);
  CHECK(count_of(svg, ">step</text>") == 2);
  CHECK(count_of(svg, ">train loss</text>") == 1);
  // the label keeps its colour in every chart: lr=0.1's blue draws two paths
  CHECK(count_of(svg, "stroke=\"#0072B2\" stroke-width=\"2\"") == 2);
  // the broken line starts twice ("M" twice in one path)
  std::smatch first_path;
  REQUIRE(std::regex_search(svg, first_path, std::regex("<path d=\"([^\"]*)\"")));
  CHECK(count_of(first_path[1].str(), "M") == 2);
  CHECK(svg.find("fill=\"#ffffff\"") != std::string::npos);  // a white card for dark viewers

  report::Figure empty{"nothing", {report::Chart{"loss", "step", "loss", {}, false, false}}};
  CHECK(report::render_svg(empty).find(">no values</text>") != std::string::npos);
}

TEST_CASE("runs' charts: a chart per directed metric, a line per run labelled by what differs") {
  const std::vector<io::RunFile> runs = {run_with(0.1, {2, 1, 0.5}), run_with(0.01, {2, 1.8})};
  const auto charts = report::run_charts(runs);
  REQUIRE(charts.size() == 2);  // the loss, and the learning rate the schedule gave (last)
  CHECK(charts[1].title == "train lr");
  CHECK(charts[1].lines.size() == 2);
  CHECK(charts[0].title == "train loss");
  CHECK(charts[0].x_label == "step");
  REQUIRE(charts[0].lines.size() == 2);
  CHECK(charts[0].lines[0].label == "lr=0.1");
  CHECK(charts[0].lines[1].label == "lr=0.01");
  CHECK(charts[0].lines[0].x == std::vector<double>{10, 20, 30});
  CHECK(charts[0].lines[1].y == std::vector<double>{2, 1.8});

  // the same hyperparameters: the runs are told apart by their files
  const auto same = report::run_charts({run_with(0.1, {1}), run_with(0.1, {2})});
  CHECK(same[0].lines[0].label == "demo 0.100000");
  // one run: its name
  CHECK(report::run_charts({run_with(0.1, {1})})[0].lines[0].label == "demo");
}

TEST_CASE("runs' charts: a metric's train and validation curves on one chart") {
  auto run = run_with(0.1, {2, 1, 0.5});
  auto& validation = run.metrics["validation"];
  validation.step = {15, 30};
  validation.epoch = {1, 1};
  validation.time = {1, 2};
  validation.series["loss"] = {1.5, 0.8};
  validation.series["accuracy"] = {0.7, 0.9};
  const auto charts = report::run_charts({run});
  REQUIRE(charts.size() == 3);  // loss, accuracy and the learning rate
  const auto loss = std::find_if(charts.begin(), charts.end(),
                                 [](const report::Chart& c) { return c.y_label == "loss"; });
  REQUIRE(loss != charts.end());
  CHECK(loss->title == "loss: train solid, validation dashed");
  REQUIRE(loss->lines.size() == 2);
  CHECK(loss->lines[0].label == "demo");  // one run, one colour: train solid, validation dashed
  CHECK_FALSE(loss->lines[0].dashed);
  CHECK(loss->lines[1].label == "demo");
  CHECK(loss->lines[1].dashed);
  CHECK(loss->lines[1].x == std::vector<double>{15, 30});
  const auto svg = report::render_svg(report::Figure{"curves", {*loss}});
  CHECK(svg.find("stroke-dasharray") != std::string::npos);
  // several runs: each run's label and the split
  auto other = run;
  other.hparams["lr"] = 0.01;
  other.path = "runs/demo/other.h5";
  const auto both = report::run_charts({run, other});
  const auto both_loss = std::find_if(both.begin(), both.end(),
                                      [](const report::Chart& c) { return c.y_label == "loss"; });
  REQUIRE(both_loss->lines.size() == 4);
  CHECK(both_loss->lines[0].label == "lr=0.1");
  CHECK(both_loss->lines[3].label == "lr=0.01");
  CHECK(both_loss->lines[3].dashed);
}

TEST_CASE("benchmark charts: a chart per model, a line per phase, throughput against batch") {
  const auto charts = report::bench_charts(points_table(), report::Pivot{}, true);
  REQUIRE(charts.size() == 2);
  CHECK(charts[0].title == "mlp");
  CHECK(charts[0].x_label == "batch size (samples)");
  CHECK(charts[0].y_label == "throughput (samples/s)");
  CHECK(charts[0].log_x);  // 16 to 64
  CHECK(charts[0].y_from_zero);
  REQUIRE(charts[0].lines.size() == 2);  // the phase varies: a line each
  CHECK(charts[0].lines[0].label == "training");
  CHECK(charts[0].lines[0].x == std::vector<double>{16, 32, 64});
  CHECK(charts[0].lines[1].y == std::vector<double>{4800, 9600, 19200});
  CHECK(std::isnan(charts[1].lines[0].y[2]));  // cnn at 64 failed: no point

  // threads as x when they vary and the batch does not
  auto threads = points_table();
  threads.rows.resize(2);
  threads.rows[1] = {std::string("mlp"), std::string("training"), int64_t{16},
                     int64_t{1},         std::string("ok"),       900.0};
  const auto by_threads = report::bench_charts(threads, report::Pivot{}, true);
  CHECK(by_threads[0].x_label == "threads");
  CHECK(by_threads[0].lines[0].x == std::vector<double>{1, 2});
  CHECK_FALSE(by_threads[0].log_x);

  // two seeds of one model: a line each, not one line that keeps the last
  auto seeds = points_table();
  seeds.columns.push_back("seed");
  for (auto& row : seeds.rows) row.push_back(int64_t{1});
  const size_t original = seeds.rows.size();
  for (size_t r = 0; r < original; ++r) {
    seeds.rows.push_back(seeds.rows[r]);
    seeds.rows.back().back() = int64_t{2};
  }
  const auto by_seed = report::bench_charts(seeds, report::Pivot{}, true);
  REQUIRE(by_seed[0].lines.size() == 4);
  CHECK(by_seed[0].lines[0].label == "training seed=1");
  CHECK(by_seed[0].lines[3].label == "inference seed=2");

  CHECK_THROWS_WITH_AS(
      report::bench_charts(points_table(), report::Pivot{{"model"}, "status", "throughput"}, false),
      doctest::Contains("'ok' is not a number"), core::UsageError);
}

TEST_CASE("--plot writes SVG, or PNG through rsvg-convert; --html one static page") {
  const auto dir = test::scratch_dir("report_charts");
  report::Figure figure{"demo", report::run_charts({run_with(0.1, {2, 1, 0.5})})};
  report::write_figure(figure, dir + "/curves.svg");
  CHECK(file_text(dir + "/curves.svg") == report::render_svg(figure));
  report::write_figure(figure, dir + "/curves.png");  // scripts/install-deps.sh installs it
  const std::string png = file_text(dir + "/curves.png");
  REQUIRE(png.size() > 1000);
  CHECK(png.compare(0, 4, "\x89PNG") == 0);
  CHECK_FALSE(std::filesystem::exists(dir + "/curves.png.svg"));  // the temporary is gone

  CHECK_THROWS_WITH_AS(report::write_figure(figure, dir + "/curves.jpg"),
                       doctest::Contains("must end in .svg or .png"), core::UsageError);
  CHECK_THROWS_WITH_AS(report::write_figure(report::Figure{"none", {}}, dir + "/none.svg"),
                       doctest::Contains("nothing to draw"), core::UsageError);

  report::Report tables;
  tables.tables.push_back(report::Table{
      "runs", "2 runs <of demo>", {"lr", "loss"}, {{0.1, 0.5}, {0.01, std::string("n/a")}}});
  const std::string page = file_text(report::write_html(dir + "/page", tables, figure, "demo"));
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("<h2>2 runs &lt;of demo&gt;</h2>") != std::string::npos);
  CHECK(page.find("<td class=\"number\">0.1</td>") != std::string::npos);
  CHECK(page.find("<td>n/a</td>") != std::string::npos);
  CHECK(count_of(page, "<svg") == 1);
  CHECK(page.find("<?xml") == std::string::npos);  // the chart is inline
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http") == page.find("http://www.w3.org/2000/svg"));  // nothing to fetch
}

TEST_CASE("make_report's figure follows the selection") {
  const auto dir = test::scratch_dir("report_figure");
  for (double lr : {0.1, 0.01, 0.001}) {
    io::RunInfo info;
    info.name = "demo";
    io::RunWriter w(io::RunWriter::new_run_path(dir, "demo"), info);
    w.write_hparams({{"lr", lr}});
    w.append_metrics("train", 1, 0, 0.1, {{"loss", lr}});
    w.finish(core::FileStatus::kCompleted);
  }
  report::ReportRequest request;
  request.inputs = {dir};
  request.selection.filters = {"lr<0.05"};
  report::Figure figure;
  report::make_report(request, &figure);
  REQUIRE(figure.charts.size() == 1);
  CHECK(figure.charts[0].lines.size() == 2);
  CHECK(figure.title == "demo: 2 of 3 runs");

  request.compare = true;
  request.inputs = {dir, dir};
  CHECK_THROWS_AS(report::make_report(request, &figure), core::UsageError);
}
