// engine report --serve in a real browser (headless chromium): the page shows the folder's runs,
// curves and damaged files, and follows a run that trains while it is open: a row written to
// the run file reaches the chart and the table without a reload. Its screenshot is the one in
// docs/results.md (ENGINE_LIVE_SCREENSHOT=FILE.png writes it there).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "engine/core/statuses.hpp"
#include "engine/io/bench_file.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/io/search_file.hpp"
#include "engine/report/search_importance.hpp"
#include "tests/report/headless_browser.hpp"
#include "tests/report/serving.hpp"
#include "tests/test_support.hpp"

using namespace engine;
namespace fs = std::filesystem;

namespace {

// A run's curves as training makes them: a loss that falls faster with a larger learning rate,
// with a little deterministic wobble; validation every 10 steps.
void append_steps(io::RunWriter& w, double lr, int from, int to) {
  for (int step = from; step <= to; ++step) {
    const double loss = 2.3 * std::exp(-lr * 0.6 * step) + 0.05 * std::sin(step * 1.7) + 0.1;
    w.append_metrics("train", step, step / 20.0, step * 0.2, {{"loss", loss}, {"lr", lr}});
    if (step % 10 == 0) {
      w.append_metrics("validation", step, step / 20.0, step * 0.2,
                       {{"loss", loss * 1.1 + 0.05}, {"accuracy", 1.0 - loss / 2.6}});
    }
  }
}

std::string write_finished_run(const std::string& runs, double lr) {
  const auto path = io::RunWriter::new_run_path(runs, "mlp");
  io::RunInfo info;
  info.name = "mlp";
  io::RunWriter w(path, info);
  w.write_hparams({{"lr", lr}, {"batch_size", 64.0}});
  append_steps(w, lr, 1, 20);
  w.finish(core::FileStatus::kCompleted);
  return path;
}

// DIR/runs with two finished runs (lr 0.05 and 0.1).
std::string two_finished_runs(const std::string& dir) {
  for (const double lr : {0.05, 0.1}) write_finished_run(dir + "/runs", lr);
  return dir + "/runs";
}

// Two finished runs in a folder of their own, served, the page open on it.
struct TwoRunsServed {
  explicit TwoRunsServed(const std::string& name)
      : dir(test::scratch_dir(name)),
        runs(two_finished_runs(dir)),
        serving(runs),
        browser(dir + "/chromium-profile", 1280, 1200) {
    browser.open(serving.server.url());
  }
  std::string dir, runs;
  test::Serving serving;
  test::HeadlessBrowser browser;
};

// A benchmark point measured on the CPU: 2 ms a batch of `batch` samples.
io::BenchPoint ok_point(const std::string& model, int64_t batch, int64_t index) {
  io::BenchPoint point;
  point.row.point = index;
  point.row.model = model;
  point.row.phase = "training";
  point.row.device = "cpu";
  point.row.dtype = "float32";
  point.row.batch_size = batch;
  point.row.threads = 1;
  point.row.num_batches = 2;
  point.row.status = core::PointStatus::kOk;
  point.row.mean_ms = point.row.p50_ms = 2.0;
  point.row.throughput = point.row.throughput_p50 = 500.0 * static_cast<double>(batch);
  return point;
}

std::string js_quoted(const std::string& text) {
  return "'" + text + "'";
}

}  // namespace

TEST_CASE("the live page shows the folder and follows a run while it trains, in chromium") {
  const auto dir = test::scratch_dir("live-page");
  const auto runs = dir + "/runs";
  for (double lr : {0.05, 0.1}) write_finished_run(runs, lr);
  std::ofstream(runs + "/damaged.h5") << "cut short";
  const std::string odd = "<b>odd<b> & 'name'.h5";
  fs::copy_file(write_finished_run(dir + "/elsewhere", 0.02), runs + "/" + odd);

  // a run that trains while the page is open: rows reach its file at each flush
  const auto live_path = io::RunWriter::new_run_path(runs, "live");
  io::RunInfo info;
  info.name = "live";
  io::RunWriter live(live_path, info);
  live.write_hparams({{"lr", 0.2}, {"batch_size", 64.0}});
  append_steps(live, 0.2, 1, 20);
  live.flush();
  const std::string live_relative = fs::path(live_path).lexically_relative(runs).generic_string();

  {
    test::Serving serving(runs);
    test::HeadlessBrowser browser(dir + "/chromium-profile", 1280, 1500);
    browser.open(serving.server.url());
    const std::string loss_chart = "document.querySelector('#charts .chart[data-metric=\"loss\"]')";
    REQUIRE(browser.wait_for("document.querySelectorAll('#runs tr[data-path]').length === 4"));
    REQUIRE(browser.wait_for(loss_chart + " && " + loss_chart + ".querySelector('canvas')"));
    // train and validation of a metric on one chart: 4 runs, each both
    CHECK(browser.evaluate("engineLive.charts.get('loss').graph.getLabels().length") == 9);
    CHECK(browser.evaluate(loss_chart + ".dataset.rows") == "20");
    // the damaged file named with why; the odd name shown as the text it is
    CHECK(browser.evaluate("document.querySelector('#problems').innerText")
              .get<std::string>()
              .find("damaged.h5: ") != std::string::npos);
    CHECK(browser.evaluate("[...document.querySelectorAll('#files td')].some("
                           "(td) => td.textContent === " +
                           js_quoted("<b>odd<b> & \\'name\\'.h5") + ")") == true);
    CHECK(browser.evaluate("document.querySelectorAll('#files b, #runs b').length") == 0);
    const std::string live_row =
        "document.querySelector('#runs tr[data-path=\"" + live_relative + "\"]')";
    CHECK(browser.evaluate(live_row + ".innerText").get<std::string>().find("running") !=
          std::string::npos);

    // new rows while the page is open: the chart and the table follow without a reload
    append_steps(live, 0.2, 21, 30);
    live.flush();
    CHECK(browser.wait_for(loss_chart + ".dataset.rows === '30'"));
    CHECK(browser.wait_for(live_row + ".innerText.includes('30')"));
    write_finished_run(runs, 0.01);
    CHECK(browser.wait_for("document.querySelectorAll('#runs tr[data-path]').length === 5"));

    // filter, sort, log axis, a run's facts
    browser.evaluate(
        "(() => { const f = document.getElementById('filter'); f.value = 'lr<0.06';"
        " f.dispatchEvent(new Event('input')); })()");
    CHECK(browser.evaluate("document.querySelectorAll('#runs tr[data-path]').length") == 3);
    browser.evaluate(
        "(() => { const f = document.getElementById('filter'); f.value = '';"
        " f.dispatchEvent(new Event('input')); })()");
    browser.evaluate(
        "[...document.querySelectorAll('#runs th')].find((th) => th.textContent === "
        "'lr').click()");
    CHECK(browser.evaluate("document.querySelector('#runs tr[data-path] td:nth-child(6)')"
                           ".textContent") == "0.01");
    // two runs ticked and compared: only what differs among them, and only they are charted
    browser.evaluate(
        "[...document.querySelectorAll('#runs tr[data-path] input')].slice(0, 2)"
        ".forEach((box) => box.click())");
    browser.evaluate("document.getElementById('compare').click()");
    CHECK(browser.evaluate("document.querySelector('#comparison h3').textContent") ==
          "Picked runs: they differ in lr");
    CHECK(browser.evaluate("document.querySelectorAll('#comparison tr').length") == 3);
    CHECK(browser.wait_for("engineLive.charts.get('loss').graph.getLabels().length === 5"));
    browser.evaluate("document.getElementById('clear').click()");
    browser.evaluate("document.getElementById('compare').click()");  // the comparison closed
    CHECK(browser.wait_for("engineLive.charts.get('loss').graph.getLabels().length === 11"));
    browser.evaluate("document.getElementById('log-y').click()");
    CHECK(browser.evaluate("engineLive.charts.get('loss').graph.getOption('logscale')") == true);
    // smoothing (an exponential moving average) changes the live run's last drawn loss; a
    // point picked (as the pointer does) shows its values in the legend
    const std::string graph = "engineLive.charts.get('loss').graph";
    // the legends name runs by the hyperparameters that differ among the charted ones
    const std::string live_train = graph + ".getLabels().indexOf('lr=0.2 train')";
    REQUIRE(browser.evaluate(live_train).get<int>() > 0);
    const std::string last_loss =
        graph + ".getValue(" + graph + ".numRows() - 1, " + live_train + ")";
    const double raw = browser.evaluate(last_loss).get<double>();
    browser.evaluate(
        "(() => { const s = document.getElementById('smoothing'); s.value = '0.9';"
        " s.dispatchEvent(new Event('input')); })()");
    CHECK(browser.evaluate(last_loss).get<double>() != doctest::Approx(raw));
    browser.evaluate(graph + ".setSelection(" + graph + ".numRows() - 1)");
    const auto legend =
        browser.evaluate(loss_chart + ".querySelector('.legend').textContent").get<std::string>();
    CHECK(legend.rfind("30:", 0) == 0);  // the step, then each series' value there
    CHECK(legend.find("lr=0.2 train") != std::string::npos);
    browser.evaluate(
        "(() => { const s = document.getElementById('smoothing'); s.value = '0';"
        " s.dispatchEvent(new Event('input')); })()");
    browser.evaluate(live_row + ".click()");
    CHECK(browser.wait_for("document.querySelector('#run-facts table') !== null"));
    CHECK(browser.evaluate("document.querySelector('#run-name').textContent")
              .get<std::string>()
              .find(live_relative) != std::string::npos);
    browser.evaluate("document.getElementById('log-y').click()");

    const char* asked = std::getenv("ENGINE_LIVE_SCREENSHOT");
    const std::string shot = asked ? asked : dir + "/live_page.png";
    browser.screenshot(shot);
    CHECK(fs::file_size(shot) > 20000);
  }
  live.finish(core::FileStatus::kCompleted);
}

TEST_CASE("a run keeps its colour at every load, when runs started later appear, in chromium") {
  TwoRunsServed page("live-page-colours");
  auto& browser = page.browser;
  const auto& runs = page.runs;
  auto& serving = page.serving;
  REQUIRE(
      browser.wait_for("state.colours.size === 2 && document.querySelector('#charts .chart')"
                       " !== null"));
  const std::string before =
      browser.evaluate("JSON.stringify([...state.colours])").get<std::string>();
  // the oldest run takes the palette's first colour
  CHECK(browser.evaluate(
            "[...state.colours.values()].join(' ') === kPalette.slice(0, 2).join(' ')") == true);
  write_finished_run(runs, 0.2);  // started later: the newest
  browser.open(serving.server.url());
  REQUIRE(
      browser.wait_for("state.colours.size === 3 && document.querySelector('#charts .chart')"
                       " !== null"));
  // the two runs keep their colours: once the newest took the first one and shifted theirs
  CHECK(browser.evaluate("[...new Map(JSON.parse(" + nlohmann::json(before).dump() +
                         "))].every(([path, colour]) => state.colours.get(path) === colour)") ==
        true);
}

TEST_CASE("a run's facts fit the window, however long its command line, in chromium") {
  const auto dir = test::scratch_dir("live-page-facts");
  const auto runs = dir + "/runs";
  {
    io::RunInfo info;
    info.name = "long";
    info.command = "engine train scripts/fashion_mnist_asha.lua";
    for (int i = 0; i < 40; ++i)
      info.command += " --set some.nested.hyperparameter" + std::to_string(i) + "=0.000123";
    io::RunWriter w(io::RunWriter::new_run_path(runs, "long"), info);
    w.write_hparams({{"lr", 0.1}});
    append_steps(w, 0.1, 1, 10);
    w.finish(core::FileStatus::kCompleted);
  }
  test::Serving serving(runs);
  test::HeadlessBrowser browser(dir + "/chromium-profile", 1400, 1000);
  browser.open(serving.server.url());
  REQUIRE(browser.wait_for("document.querySelectorAll('#runs tr[data-path]').length === 1"));
  browser.evaluate("document.querySelector('#runs tr[data-path]').click()");
  REQUIRE(
      browser.wait_for("document.querySelector('#run-facts .facts') !== null && "
                       "document.querySelector('#run-facts').textContent.includes('nested')"));
  // nothing wider than the window: the command line wraps inside its cell
  CHECK(browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth") == true);
}

TEST_CASE("the page's view is in its URL: the address opens it again, in chromium") {
  TwoRunsServed page("live-page-view");
  auto& browser = page.browser;
  auto& serving = page.serving;
  REQUIRE(browser.wait_for("document.querySelectorAll('#runs tr[data-path]').length === 2"));
  // one run picked, focused, smoothing 0.6, a log axis, the runs sorted by lr
  browser.evaluate("document.querySelector('#runs tr[data-path] input').click()");
  browser.evaluate("document.querySelector('#runs tr[data-path]').click()");
  browser.evaluate(
      "(() => { const s = document.getElementById('smoothing'); s.value = '0.6';"
      " s.dispatchEvent(new Event('input')); })()");
  browser.evaluate("document.getElementById('log-y').click()");
  browser.evaluate(
      "[...document.querySelectorAll('#runs th')].find((t) => t.textContent === "
      "'lr').click()");
  REQUIRE(browser.wait_for("location.hash.startsWith('#view=') && state.picked.size === 1"));
  const std::string picked = browser.evaluate("[...state.picked][0]").get<std::string>();
  const std::string url = browser.evaluate("location.href").get<std::string>();
  // the same address, loaded again (from elsewhere: a fragment alone does not load a page): the
  // same view
  browser.open("about:blank");
  browser.open(url);
  REQUIRE(browser.wait_for("document.querySelectorAll('#runs tr[data-path]').length === 2"));
  CHECK(browser.evaluate("[...state.picked].join('|')") == picked);
  CHECK(browser.evaluate("state.focus") == picked);
  CHECK(browser.evaluate("document.getElementById('smoothing').value") == "0.6");
  CHECK(browser.evaluate("document.getElementById('log-y').checked") == true);
  CHECK(browser.evaluate("state.sorts.runs.column") == "lr");
  // a fragment that is no view is left alone: the page opens as it does without one
  browser.open("about:blank");
  browser.open(serving.server.url() + "#view=%7Bnot%20json");
  REQUIRE(browser.wait_for("document.querySelectorAll('#runs tr[data-path]').length === 2"));
  CHECK(browser.evaluate("state.picked.size") == 0);
}

TEST_CASE("hostile names reach the live page as text, never as elements, in chromium") {
  const auto dir = test::scratch_dir("live-page-hostile");
  const auto runs = dir + "/runs";
  const std::string metric = "m<img src=x onerror=window.pwned=1>";
  const std::string hparam = "<b>x";
  const std::string name = "<i>net</i>";
  {
    io::RunInfo info;
    info.name = name;
    io::RunWriter w(io::RunWriter::new_run_path(runs, "hostile"), info);
    w.write_hparams({{hparam, 1.0}, {"lr", 0.1}});
    for (int step = 1; step <= 5; ++step) {
      w.append_metrics("train", step, step / 5.0, step * 0.1, {{metric, 1.0 / step}});
    }
    w.finish(core::FileStatus::kCompleted);
  }
  {  // a search over that hyperparameter, whose metric has a hostile name too
    io::SearchInfo info;
    info.name = name;
    info.searcher["name"] = std::string("grid");
    info.searcher["metric"] = "validation." + metric;
    info.spaces[hparam] = "search.int(1, 3)";
    io::SearchFile search(runs + "/search.h5", info);
    for (int64_t id = 0; id < 3; ++id) {
      io::SearchTrialRecord trial;
      trial.id = id;
      trial.hparams = {{hparam, static_cast<double>(id + 1)}};
      trial.status = core::TrialStatus::kCompleted;
      trial.rung_metrics = {0.5 + 0.1 * static_cast<double>(id)};
      search.write_trial(trial);
    }
    search.finish(core::FileStatus::kCompleted);
  }
  {  // a benchmark of a model with a hostile name, at two batch sizes
    io::BenchInfo info;
    info.name = "sweep";
    io::BenchFile bench(runs + "/bench.h5", info);
    for (const int64_t batch : {8, 16}) bench.write_point(ok_point(name, batch, batch / 8 - 1));
    bench.finish(core::FileStatus::kCompleted);
  }
  test::Serving serving(runs);
  test::HeadlessBrowser browser(dir + "/chromium-profile", 1280, 1200);
  browser.open(serving.server.url());
  const std::string chart =
      "[...document.querySelectorAll('#charts .chart')].find((c) => "
      "c.dataset.metric === " +
      nlohmann::json(metric).dump() + ")";
  REQUIRE(browser.wait_for("document.querySelectorAll('#runs tr[data-path]').length === 1"));
  REQUIRE(browser.wait_for("(" + chart + ") !== undefined && (" + chart +
                           ").querySelector('.dygraph-title') !== null"));
  // the chart's title (dygraphs' innerHTML) shows the metric's name as it is
  CHECK(browser.evaluate("(" + chart + ").querySelector('.dygraph-title').textContent") == metric);
  // no element made of a name anywhere on the page: the run's name and its hyperparameter's
  // are in the runs table as text too
  CHECK(browser.evaluate("document.querySelectorAll('body img, body b, body i').length") == 0);
  CHECK(browser.evaluate("window.pwned === undefined") == true);
  CHECK(browser.evaluate("document.querySelector('#runs').textContent.includes(" +
                         nlohmann::json(hparam).dump() + ")") == true);
  CHECK(browser.evaluate("document.querySelector('#runs').textContent.includes(" +
                         nlohmann::json(name).dump() + ")") == true);
  // the search's chart: the metric against the hyperparameter, both in its title and axes (the
  // optimization history before it names the metric as text too)
  const std::string against =
      "[...document.querySelectorAll('#searches .chart')].find((c) => "
      "c.dataset.title.includes(' against '))";
  REQUIRE(browser.wait_for("(" + against + ") !== undefined && (" + against +
                           ").querySelector('.dygraph-title') !== null"));
  CHECK(browser.evaluate("(" + against + ").querySelector('.dygraph-title').textContent") ==
        "validation." + metric + " against " + hparam);
  CHECK(browser.evaluate("(" + against + ").querySelector('.dygraph-xlabel').textContent") ==
        hparam);
  CHECK(browser.evaluate("document.querySelector('#searches .chart .dygraph-title').textContent") ==
        "validation." + metric + " by trial (optimization history)");
  // the importance card and the parallel coordinates name the hyperparameter as text
  REQUIRE(
      browser.wait_for("document.querySelector('#searches .importance-row .name') !== null && "
                       "document.querySelector('#searches .parallel .axis-name') !== null"));
  CHECK(browser.evaluate("document.querySelector('#searches .importance-row .name').textContent") ==
        hparam);
  CHECK(browser.evaluate("document.querySelector('#searches .parallel .axis-name').textContent") ==
        hparam);
  CHECK(browser.evaluate("document.querySelectorAll('body img, body b, body i').length") == 0);
  // the benchmark's chart: the model's name in its legend and table, as text
  REQUIRE(
      browser.wait_for("document.querySelector('#benchmarks .chart .legend') !== null && "
                       "document.querySelector('#benchmarks .chart .legend').textContent "
                       "!== ''"));
  CHECK(browser.evaluate("document.querySelector('#benchmarks').textContent.includes(" +
                         nlohmann::json(name).dump() + ")") == true);
  CHECK(browser.evaluate("document.querySelectorAll('body img, body b, body i').length") == 0);
}

TEST_CASE("a search's charts: one dot per trial, ties included, and log axes that draw") {
  // 8 trials: a learning rate over three decades (a log axis, which padding once put below
  // zero: nothing drawn) and a width with ties (3 values: 3 dots where there are 8 trials)
  const auto dir = test::scratch_dir("live-page-search-view");
  const auto runs = dir + "/runs";
  {
    io::SearchInfo info;
    info.name = "view";
    info.searcher["name"] = std::string("random");
    info.searcher["metric"] = std::string("validation.loss");
    info.spaces["lr"] = "search.log(1e-4, 1e-1)";
    info.spaces["width"] = "search.choice{32, 64, 128}";
    io::SearchFile search(runs + "/search.h5", info);
    const double lrs[] = {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 5e-4};
    const double widths[] = {32, 32, 64, 64, 64, 128, 128, 32};
    for (int64_t id = 0; id < 8; ++id) {
      io::SearchTrialRecord trial;
      trial.id = id;
      trial.hparams = {{"lr", lrs[id]}, {"width", widths[id]}};
      trial.status = core::TrialStatus::kCompleted;
      trial.rung_metrics = {0.5 + 0.01 * static_cast<double>(id)};
      search.write_trial(trial);
    }
    search.finish(core::FileStatus::kCompleted);
  }
  test::Serving serving(runs);
  test::HeadlessBrowser browser(dir + "/chromium-profile", 1280, 1200);
  browser.open(serving.server.url());
  const auto chart = [](const std::string& hparam) {
    return "[...document.querySelectorAll('#searches .chart')].find((c) => c.dataset.title === "
           "'validation.loss against " +
           hparam + "')";
  };
  REQUIRE(browser.wait_for("(" + chart("lr") + ") !== undefined && (" + chart("width") +
                           ") !== undefined"));
  // the optimization history: each trial's metric by its number, and the best so far
  const std::string history =
      "[...document.querySelectorAll('#searches .chart')].find((c) => "
      "c.dataset.title === 'validation.loss by trial (optimization "
      "history)')";
  REQUIRE(browser.wait_for("(" + history + ") !== undefined"));
  CHECK(browser.evaluate("(" + history + ").dataset.rows") == "8");
  // the metric rises trial by trial here: the best so far stays trial 0's
  CHECK(browser.evaluate("state.tableCharts.searches[0].getValue(7, 2)").get<double>() ==
        doctest::Approx(0.5));
  CHECK(browser.evaluate("state.tableCharts.searches[0].getValue(7, 1)").get<double>() ==
        doctest::Approx(0.57));
  // every trial one mark: 8 rows (x values) in each chart, the tied widths spread
  CHECK(browser.evaluate("(" + chart("width") + ").dataset.rows") == "8");
  CHECK(browser.evaluate("(" + chart("lr") + ").dataset.rows") == "8");
  // the log axis starts above zero, below the smallest rate
  const double low =
      std::stod(browser.evaluate("(" + chart("lr") + ").dataset.xLow").get<std::string>());
  CHECK(low > 0);
  CHECK(low < 1e-4);
  // its tick labels each on one line: no label taller than one line of text
  const std::string labels = "[...(" + chart("lr") + ").querySelectorAll('.dygraph-axis-label-x')]";
  CHECK(browser.evaluate(labels + ".length").get<int>() >= 2);
  CHECK(browser.evaluate(labels + ".every((l) => l.getBoundingClientRect().height < 20)") == true);
}

TEST_CASE("the live page shows a search's leaderboard and plots, and benchmarks' pivots") {
  const char* source = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const auto dir = test::scratch_dir("live-page-tables");
  const auto runs = dir + "/search";
  fs::create_directories(runs + "/bench");
  fs::copy_file(std::string(source) + "/tests/fuzz/base/search.h5", runs + "/search.h5");
  fs::copy_file(std::string(source) + "/tests/fuzz/base/bench.h5", runs + "/bench/sweep.h5");
  // trial 1's run file where the search file names it ("search/search/objective/...", from
  // the folder the search ran in): here, inside the served folder
  const std::string trial = "search/objective/20261124-152634/1/objective/20261124-152635.h5";
  fs::create_directories(fs::path(runs + "/" + trial).parent_path());
  {
    io::RunInfo info;
    info.name = "objective";
    io::RunWriter w(runs + "/" + trial, info);
    append_steps(w, 0.1, 1, 20);
    w.finish(core::FileStatus::kCompleted);
  }
  const auto before = fs::current_path();
  fs::current_path(dir);
  struct BackTo {
    fs::path folder;
    ~BackTo() { fs::current_path(folder); }
  } back_to{before};
  test::Serving serving(runs);
  test::HeadlessBrowser browser(dir + "/chromium-profile", 1280, 1200);
  browser.open(serving.server.url());
  REQUIRE(browser.wait_for("document.querySelectorAll('#searches table tr').length === 5"));
  // the trials best first, and the metric against each numeric searched hyperparameter
  CHECK(browser.evaluate("document.querySelector('#searches table tr:nth-child(2)').innerText")
            .get<std::string>()
            .find("0.6255") != std::string::npos);
  CHECK(browser.evaluate("[...document.querySelectorAll('#searches .chart')].map((c) => "
                         "c.dataset.title).join('|')") ==
        "validation.loss by trial (optimization history)|validation.loss by step, each trial "
        "(intermediate values)|hyperparameter importance for validation.loss (fANOVA, as Optuna's "
        "default; 2 completed trials)|validation.loss against net.depth|validation.loss against "
        "x|parallel coordinates: 2 trials at rung 1, darker is better");
  // throughput against batch size: a line per model and phase, two batch sizes each
  REQUIRE(browser.wait_for("document.querySelector('#benchmarks .chart canvas') !== null"));
  CHECK(browser.evaluate("document.querySelector('#benchmarks .chart').dataset.rows") == "2");
  CHECK(browser.evaluate("document.querySelector('#benchmarks .chart').dataset.title")
            .get<std::string>()
            .rfind("throughput against batch_size", 0) == 0);
  CHECK(browser.evaluate("document.querySelector('#runs').innerText")
            .get<std::string>()
            .find("no training runs") != std::string::npos);
  // a trial's row opens its run: facts and curves
  browser.evaluate("document.querySelector('#searches table tr[data-path]').click()");
  CHECK(browser.wait_for("document.querySelector('#run-name').textContent.includes('" + trial +
                         "')"));
  CHECK(
      browser.wait_for("document.querySelector('#charts .chart[data-metric=\"loss\"]') !== null"));
}

TEST_CASE("a zoomed benchmark chart stays as it is while a run trains beside it") {
  const char* source = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const auto dir = test::scratch_dir("live-page-zoom");
  fs::create_directories(dir + "/runs/bench");
  fs::copy_file(std::string(source) + "/tests/fuzz/base/bench.h5", dir + "/runs/bench/sweep.h5");
  io::RunInfo info;
  info.name = "live";
  io::RunWriter live(dir + "/runs/live.h5", info);
  append_steps(live, 0.1, 1, 5);
  live.flush();
  test::Serving serving(dir + "/runs");
  test::HeadlessBrowser browser(dir + "/chromium-profile", 1280, 900);
  browser.open(serving.server.url());
  REQUIRE(browser.wait_for("document.querySelector('#benchmarks .chart canvas') !== null"));
  REQUIRE(browser.wait_for("document.querySelector('#runs tr[data-path]') !== null"));
  browser.evaluate(
      "window.zoomed = engineLive.tableCharts.benchmarks[0];"
      " zoomed.updateOptions({dateWindow: [2.5, 3.5]})");
  append_steps(live, 0.1, 6, 10);  // the folder changes: the page reads it again
  live.flush();
  REQUIRE(
      browser.wait_for("document.querySelector('#runs tr[data-path]').innerText"
                       ".includes('\\t10\\t')"));
  CHECK(browser.evaluate("engineLive.tableCharts.benchmarks[0] === window.zoomed") == true);
  CHECK(browser.evaluate("engineLive.tableCharts.benchmarks[0].xAxisRange()[0]") == 2.5);
  live.finish(core::FileStatus::kCompleted);
}

TEST_CASE("a search's importance, parallel coordinates and intermediate values, in chromium") {
  // ASHA over 10 trials: rungs of 2, 4 and 8 steps (10, 6 and 2 trials: 0 and 9 completed), a
  // learning rate over decades, a choice of words, each trial's validation.loss at every rung
  const auto dir = test::scratch_dir("live-page-search-views");
  const auto runs = dir + "/runs";
  const auto path = runs + "/search.h5";
  {
    io::SearchInfo info;
    info.name = "views";
    info.searcher["name"] = std::string("asha");
    info.searcher["metric"] = std::string("validation.loss");
    info.spaces["lr"] = "search.log(0.0001, 0.1)";
    info.spaces["act"] = "search.choice{'relu', 'tanh'}";
    io::SearchFile search(path, info);
    for (int64_t id = 0; id < 10; ++id) {
      io::SearchTrialRecord trial;
      trial.id = id;
      const double lr = std::pow(10.0, -4.0 + 0.3 * static_cast<double>(id));
      const bool tanh = id % 2 == 0;
      trial.hparams = {{"lr", lr}, {"act", std::string(tanh ? "tanh" : "relu")}};
      const int64_t rungs = id == 0 || id == 9 ? 3 : id < 5 ? 2 : 1;
      trial.rung = rungs - 1;
      trial.status = rungs == 3 ? core::TrialStatus::kCompleted : core::TrialStatus::kStopped;
      io::MetricSplit validation;
      for (int64_t step = 2; step <= (int64_t{2} << (rungs - 1)); step *= 2) {
        const double loss = std::abs(std::log10(lr) + 2.5) + (tanh ? 0.3 : 0) + 1.0 / step;
        validation.step.push_back(step);
        validation.epoch.push_back(0);
        validation.time.push_back(static_cast<double>(step));
        validation.series["loss"].push_back(loss);
        if (step == 2 || step == 4 || step == 8) trial.rung_metrics.push_back(loss);
      }
      trial.metrics["validation"] = validation;
      search.write_trial(trial);
    }
    search.finish(core::FileStatus::kCompleted);
  }
  // the figures the engine computes (engine report shows them too)
  const report::Table importance = report::importance_table({io::read_search_file(path)});
  REQUIRE(importance.rows.size() == 2);
  test::Serving serving(runs);
  test::HeadlessBrowser browser(dir + "/chromium-profile", 1280, 1200);
  browser.open(serving.server.url());
  const auto card = [](const std::string& start) {
    return "[...document.querySelectorAll('#searches .chart')].find((c) => "
           "c.dataset.title.startsWith('" +
           start + "'))";
  };
  REQUIRE(browser.wait_for("(" + card("hyperparameter importance") + ") !== undefined && (" +
                           card("parallel coordinates") + ") !== undefined && (" +
                           card("validation.loss by step") + ") !== undefined"));
  // importance: a row per hyperparameter, in the engine's order, with its share
  const std::string rows =
      "[...(" + card("hyperparameter importance") + ").querySelectorAll('.importance-row')]";
  CHECK(browser.evaluate(rows + ".map((r) => r.dataset.name).join(',')") ==
        std::get<std::string>(importance.rows[0][0]) + "," +
            std::get<std::string>(importance.rows[1][0]));
  CHECK(
      std::stod(
          browser.evaluate(rows + "[0].querySelector('.share').textContent").get<std::string>()) ==
      doctest::Approx(std::get<double>(importance.rows[0][1])).epsilon(1e-3));
  CHECK(browser.evaluate("(" + card("hyperparameter importance") + ").dataset.title") ==
        importance.title);
  // parallel coordinates: the 2 trials of the last rung, one line each, an axis per
  // hyperparameter and the metric, the learning rate's on a log scale
  const std::string parallel = card("parallel coordinates");
  CHECK(browser.evaluate("(" + parallel + ").dataset.title") ==
        "parallel coordinates: 2 trials at rung 2, darker is better");
  CHECK(browser.evaluate("(" + parallel + ").querySelectorAll('polyline.trial').length") == 2);
  CHECK(browser.evaluate("[...(" + parallel +
                         ").querySelectorAll('.axis-name')].map((t) => t.textContent).join('|')") ==
        "act|lr (log)|validation.loss");
  // trial 0's learning rate (1e-4) at the bottom of its axis, trial 9's (0.05) at the top
  const std::string ys = "(" + parallel +
                         ").querySelector('polyline[data-trial=\"ID\"]').getAttribute('points')"
                         ".split(' ')[1].split(',')[1]";
  auto y_of = [&](const std::string& id) {
    std::string e = ys;
    e.replace(e.find("ID"), 2, id);
    return std::stod(browser.evaluate(e).get<std::string>());
  };
  CHECK(y_of("0") > y_of("9"));  // lower on the page: a smaller learning rate
  // intermediate values: a line per trial, at the steps each was measured (2, 4, 8)
  const std::string steps = card("validation.loss by step");
  CHECK(browser.evaluate("(" + steps + ").dataset.rows") == "3");
  CHECK(browser.evaluate("(" + steps + ").dataset.points") == "18");  // 10 + 6 + 2
}

TEST_CASE("a starved benchmark point is marked in its chart and its table, in chromium") {
  const auto dir = test::scratch_dir("live-page-starved");
  const auto runs = dir + "/runs";
  {
    io::BenchInfo info;
    info.name = "sweep";
    io::BenchFile bench(runs + "/bench.h5", info);
    for (const int64_t batch : {8, 16, 32}) {
      io::BenchPoint point = ok_point("mlp", batch, batch / 8 - 1);
      point.row.starved = batch == 16;
      point.row.cpu_share = batch == 16 ? 0.09 : 0.97;
      bench.write_point(point);
    }
    bench.finish(core::FileStatus::kCompleted);
  }
  test::Serving serving(runs);
  test::HeadlessBrowser browser(dir + "/chromium-profile", 1280, 1200);
  browser.open(serving.server.url());
  REQUIRE(browser.wait_for("document.querySelector('#benchmarks .chart canvas') !== null"));
  const std::string chart = "document.querySelector('#benchmarks .chart')";
  CHECK(browser.evaluate(chart + ".dataset.starved") == "1");
  CHECK(browser.evaluate(chart + ".querySelector('.legend').textContent.includes('starved')") ==
        true);
  CHECK(browser.evaluate("document.querySelectorAll('#benchmarks td.starved').length") == 1);
}
