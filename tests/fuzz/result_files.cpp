// Run, benchmark and search files (tests/fuzz/base/, written by the engine) with their groups,
// datasets and attributes removed, retyped, reshaped or refilled, then read as engine report
// reads them: every table format, the charts and the HTML page.
#include "engine/io/result_file.hpp"
#include "engine/report/chart.hpp"
#include "engine/report/html.hpp"
#include "engine/report/reports.hpp"
#include "tests/fuzz/hdf5_mutator.hpp"

#ifndef ENGINE_FUZZ_BASE_DIR
#error "ENGINE_FUZZ_BASE_DIR: the folder of the base files"
#endif

ENGINE_FUZZ_TARGET(result_files) {
  using namespace engine::report;
  engine::fuzz::Bytes in(data, size);
  const std::string base = in.pick(std::vector<std::string>{"run.h5", "bench.h5", "search.h5"});
  const auto path = engine::fuzz::scratch_dir() + "/fuzz-" + base;
  engine::fuzz::mutate_hdf5(std::string(ENGINE_FUZZ_BASE_DIR) + "/" + base, path, in);
  (void)engine::io::result_kind(path);
  ReportRequest request;
  request.inputs = {path};
  request.format =
      in.pick(std::vector<Format>{Format::kText, Format::kCsv, Format::kMarkdown, Format::kJson});
  Figure figure;
  const auto report = make_report(request, &figure);
  (void)render(report, request.format);
  (void)render_svg(figure);
  if (in.flag()) (void)html_page(report, figure, "fuzz");
}
