// A figure written where the user asked: FILE.svg as it is, FILE.png rendered by rsvg-convert
// (Debian's librsvg2-bin), the one program the engine calls for it.
#pragma once

#include <string>

#include "engine/report/chart.hpp"

namespace engine::report {

// A UsageError for another extension, or for .png without rsvg-convert on the PATH; an IoError
// when the file cannot be written or rsvg-convert fails.
void write_figure(const Figure& figure, const std::string& path);

}  // namespace engine::report
