#include "engine/report/html.hpp"

#include <filesystem>
#include <sstream>
#include <vector>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"

namespace engine::report {
namespace {

constexpr const char* kStyle = R"(
body { font-family: DejaVu Sans, Helvetica, Arial, sans-serif; margin: 2em; color: #1a1a1a;
       background: #fafafa; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: left;
         white-space: nowrap; }
th { background: #eee; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
.figure svg { max-width: 100%; height: auto; border-radius: 6px; }
.scroll { overflow-x: auto; }
@media (prefers-color-scheme: dark) {
  body { color: #e6e6e6; background: #181818; }
  th { background: #2a2a2a; } th, td { border-bottom-color: #3a3a3a; }
}
)";

void table_html(std::ostringstream& out, const Table& table) {
  if (!table.title.empty()) out << "<h2>" << xml_escaped(table.title) << "</h2>\n";
  out << "<div class=\"scroll\"><table>\n<tr>";
  for (const auto& column : table.columns) out << "<th>" << xml_escaped(column) << "</th>";
  out << "</tr>\n";
  for (const auto& row : table.rows) {
    out << "<tr>";
    for (const auto& cell : row) {
      const bool number =
          std::holds_alternative<int64_t>(cell) || std::holds_alternative<double>(cell);
      out << (number ? "<td class=\"number\">" : "<td>") << xml_escaped(cell_text(cell)) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table></div>\n";
}

}  // namespace

std::string html_page(const Report& report, const Figure& figure, const std::string& heading) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << xml_escaped(heading) << "</title>\n<style>" << kStyle << "</style>\n"
      << "</head>\n<body>\n<h1>" << xml_escaped(heading) << "</h1>\n";
  if (!figure.charts.empty()) {
    std::string svg = render_svg(figure);
    svg.erase(0, svg.find("<svg"));  // inline: without the XML declaration
    out << "<div class=\"figure\">\n" << svg << "</div>\n";
  }
  for (const auto& table : report.tables) table_html(out, table);
  out << "</body>\n</html>\n";
  return out.str();
}

std::string write_html(const std::string& folder, const Report& report, const Figure& figure,
                       const std::string& heading) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) {
    throw core::IoError("--html " + folder + ": cannot create the folder: " + error.message());
  }
  const std::string path = (std::filesystem::path(folder) / "index.html").string();
  const std::string page = html_page(report, figure, heading);
  core::write_file(path, std::vector<uint8_t>(page.begin(), page.end()));
  return path;
}

}  // namespace engine::report
