#include "engine/report/chart_file.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"

extern char** environ;

namespace engine::report {
namespace {

void write_text(const std::string& path, const std::string& text) {
  core::write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

// rsvg-convert SVG -> PNG; its own message on stderr when it fails.
void convert_to_png(const std::string& svg, const std::string& png) {
  std::vector<std::string> args = {"rsvg-convert", "--format", "png", "--output", png, svg};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, "rsvg-convert", nullptr, nullptr, argv.data(), environ);
  if (error == ENOENT) {
    throw core::UsageError("--plot " + png +
                           ": a PNG is drawn by rsvg-convert, which is not installed (Debian: "
                           "apt-get install librsvg2-bin); or ask for an .svg");
  }
  if (error != 0) {
    throw core::IoError("--plot " + png + ": cannot start rsvg-convert: " + std::strerror(error));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
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
