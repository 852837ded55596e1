// engine report FILE|FOLDER...: run and benchmark files as tables (engine/report);
// docs/results.md.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "engine/bench/parameters.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/io/bench_file.hpp"
#include "engine/report/chart_file.hpp"
#include "engine/report/dlbs_export.hpp"
#include "engine/report/html.hpp"
#include "engine/report/live_server.hpp"
#include "engine/report/reports.hpp"

namespace engine::cli {
namespace {

// --format dlbs: every point of the benchmark files as DLBS's records, on stdout.
int dlbs_report(const std::vector<std::string>& inputs, const cxxopts::ParseResult& flags) {
  for (const char* other :
       {"rows", "cols", "value", "compare", "plot", "html", "filter", "sort", "last"}) {
    if (flags.count(other)) {
      throw core::UsageError(std::string("--format dlbs writes every point as DLBS's records; --") +
                             other + " does not apply (select with DLBS's bench_data.py --select)");
    }
  }
  const auto files = report::result_files(inputs);
  if (files.benchmarks.empty()) {
    throw core::UsageError("--format dlbs exports benchmark files; " + core::join(inputs, ", ") +
                           " holds none");
  }
  std::vector<io::BenchContents> contents;
  for (const auto& path : files.benchmarks) contents.push_back(io::BenchFile::read_all(path));
  report::DlbsNames names;
  for (const auto& parameter : bench::point_parameters()) {
    if (!parameter.dlbs.empty()) names[parameter.name] = parameter.dlbs;
  }
  const std::string text = report::dlbs_document(contents, names);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

// --serve [FOLDER]: the live page, until Ctrl-C.
int serve_report(const std::vector<std::string>& inputs, const cxxopts::ParseResult& flags) {
  for (const char* other :
       {"rows", "cols", "value", "compare", "plot", "html", "filter", "sort", "last", "format"}) {
    if (flags.count(other)) {
      throw core::UsageError(std::string("--serve shows a folder on a live page, where runs are "
                                         "sorted, filtered and charted; --") +
                             other + " does not apply");
    }
  }
  if (inputs.size() > 1) {
    throw core::UsageError("--serve shows one folder (got " + core::join(inputs, ", ") +
                           "): give the folder that holds them all");
  }
  report::ServeOptions options;
  if (!inputs.empty()) options.folder = inputs.front();
  options.host = flags["host"].as<std::string>();
  options.port = static_cast<int>(flags["port"].as<int64_t>());
  if (flags["port"].as<int64_t>() != options.port) options.port = -1;  // refused as no port
  report::LiveServer server(options);
  std::signal(SIGPIPE, SIG_IGN);  // a browser that goes away mid-answer is not an error
  core::InterruptScope interrupts(nullptr);
  std::printf("serving %s at %s (read-only; Ctrl-C stops)\n", options.folder.c_str(),
              server.url().c_str());
  std::fflush(stdout);
  std::atomic<bool> ended{false};
  std::thread answering([&] {
    server.run();
    ended = true;
  });
  while (!ended && core::pending_interrupt() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  server.stop();
  answering.join();
  std::printf("stopped serving %s\n", options.folder.c_str());
  return 0;
}

cxxopts::Options report_options() {
  cxxopts::Options options(
      "engine report",
      "Show result files as tables: one run's summary (metrics with their last and best values), "
      "several runs (files, or folders searched recursively) compared side by side, and "
      "benchmark points, listed or pivoted (--rows model --cols batch_size --value throughput); "
      "charts with --plot FILE.svg|png, one static page with --html DIR, a live page with "
      "--serve.");
  options.positional_help("FILE|FOLDER...").show_positional_help();
  options.add_options()("inputs", "run and benchmark files, and folders",
                        cxxopts::value<std::vector<std::string>>())(
      "format",
      "text, csv, markdown or json; dlbs: benchmark points as DLBS's JSON (bench_data.py reads it)",
      cxxopts::value<std::string>()->default_value("text"))(
      "sort", "sort the comparison by this column (metrics best first)",
      cxxopts::value<std::string>()->default_value(""))(
      "filter", "keep the rows where COLUMN OP VALUE holds, e.g. 'lr<0.1' (repeatable)",
      cxxopts::value<std::vector<std::string>>())("last", "only the N most recently started runs",
                                                  cxxopts::value<int64_t>()->default_value("0"))(
      "rows", "benchmarks: pivot with a row per value of these columns (model,phase)",
      cxxopts::value<std::string>())(
      "cols", "benchmarks: pivot with a column per value of this column (batch_size)",
      cxxopts::value<std::string>())(
      "value",
      "benchmarks: the pivot's value: throughput, p50_ms, speedup, efficiency or any number "
      "column; several, comma-separated, make a table each",
      cxxopts::value<std::string>())(
      "compare", "two benchmark files, BEFORE AFTER: the change of every point, against its noise")(
      "plot", "also draw charts into FILE.svg or FILE.png: runs' curves, benchmarks' throughput",
      cxxopts::value<std::string>())(
      "html", "also write DIR/index.html: the tables and charts on one static page",
      cxxopts::value<std::string>())(
      "serve",
      "a live page over FOLDER (default runs): runs, curves, searches and benchmarks, updated "
      "while runs train; read-only, until Ctrl-C")(
      "port", "--serve: the port (0: any free one)",
      cxxopts::value<int64_t>()->default_value("6006"))(
      "host", "--serve: the address to answer on (only this machine by default)",
      cxxopts::value<std::string>()->default_value("127.0.0.1"))("h,help", "show this help");
  options.parse_positional({"inputs"});
  return options;
}

}  // namespace

int report_command(const std::vector<std::string>& args) {
  auto options = report_options();
  auto flags = parse(options, args);
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  report::ReportRequest request;
  if (flags.count("inputs")) request.inputs = flags["inputs"].as<std::vector<std::string>>();
  if (flags.count("serve")) return serve_report(request.inputs, flags);
  for (const char* served : {"port", "host"}) {
    if (flags.count(served))
      throw core::UsageError(std::string("--") + served + " goes with --serve");
  }
  if (flags["format"].as<std::string>() == "dlbs") return dlbs_report(request.inputs, flags);
  request.format = report::parse_format(flags["format"].as<std::string>());
  request.selection.sort = flags["sort"].as<std::string>();
  if (flags.count("filter"))
    request.selection.filters = flags["filter"].as<std::vector<std::string>>();
  request.selection.last = flags["last"].as<int64_t>();
  if (request.selection.last < 0)
    throw core::UsageError("--last must be a positive number of runs");
  request.compare = flags.count("compare") > 0;
  if (flags.count("rows") || flags.count("cols") || flags.count("value")) {
    report::Pivot pivot;
    if (flags.count("rows")) pivot.rows = report::split_columns(flags["rows"].as<std::string>());
    if (flags.count("cols")) pivot.cols = flags["cols"].as<std::string>();
    if (flags.count("value")) {
      request.values = report::split_columns(flags["value"].as<std::string>());
      if (request.values.empty()) throw core::UsageError("--value names no column");
      pivot.value = request.values.front();
    }
    request.pivot = pivot;
  }
  request.choose_x = flags.count("cols") == 0;
  const bool plot = flags.count("plot") > 0, html = flags.count("html") > 0;
  report::Figure figure;
  const auto made = report::make_report(request, plot || html ? &figure : nullptr);
  const std::string text = report::render(made, request.format);
  std::fwrite(text.data(), 1, text.size(), stdout);
  // where the files went: on stderr, so that the table on stdout stays clean for a pipe
  if (plot) {
    const auto path = flags["plot"].as<std::string>();
    report::write_figure(figure, path);
    std::fprintf(stderr, "chart: %s\n", path.c_str());
  }
  if (html) {
    const auto path = report::write_html(flags["html"].as<std::string>(), made, figure,
                                         "engine report " + core::join(request.inputs, " "));
    std::fprintf(stderr, "page: %s\n", path.c_str());
  }
  return 0;
}

}  // namespace engine::cli
