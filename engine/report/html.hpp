// `engine report --html DIR`: one static page with the report's tables and its charts, inline
// (no script, no stylesheet or font to fetch), to open offline or publish as it is.
#pragma once

#include <string>

#include "engine/report/chart.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

// The page: a heading, the figure (when it has charts) and every table, numbers right-aligned;
// light or dark following the reader's setting, the charts on their own white cards.
std::string html_page(const Report& report, const Figure& figure, const std::string& heading);

// Writes DIR/index.html (creating DIR); returns its path. IoError when it cannot.
std::string write_html(const std::string& folder, const Report& report, const Figure& figure,
                       const std::string& heading);

}  // namespace engine::report
