#include "engine/report/chart_file.hpp"

#include <filesystem>
#include <vector>

#include "engine/core/child_process.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"

namespace engine::report {
namespace {

void write_text(const std::string& path, const std::string& text) {
  core::write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

// rsvg-convert SVG -> PNG; its own message on stderr when it fails.
void convert_to_png(const std::string& svg, const std::string& png) {
  if (!core::find_program("rsvg-convert")) {
    throw core::UsageError("--plot " + png +
                           ": a PNG is drawn by rsvg-convert, which is not installed (Debian: "
                           "apt-get install librsvg2-bin); or ask for an .svg");
  }
  core::ChildSpec spec;
  spec.argv = {"rsvg-convert", "--format", "png", "--output", png, svg};
  spec.what = "rsvg-convert for --plot " + png;
  core::ChildProcess converter(spec);
  if (!converter.wait().succeeded()) {
    throw core::IoError("--plot " + png + ": rsvg-convert failed to draw " + svg);
  }
}

}  // namespace

void write_figure(const Figure& figure, const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension != ".svg" && extension != ".png") {
    throw core::UsageError("--plot " + path + ": the chart's file must end in .svg or .png");
  }
  if (figure.charts.empty()) {
    throw core::UsageError("--plot " + path + ": the selected files hold nothing to draw");
  }
  const std::string svg = render_svg(figure);
  if (extension == ".svg") {
    write_text(path, svg);
    return;
  }
  const std::string temporary = path + ".svg";
  write_text(temporary, svg);
  try {
    convert_to_png(temporary, path);
  } catch (...) {
    std::filesystem::remove(temporary);
    throw;
  }
  std::filesystem::remove(temporary);
}

}  // namespace engine::report
