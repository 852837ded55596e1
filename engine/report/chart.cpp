#include "engine/report/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

namespace engine::report {
namespace {

// Okabe and Ito's colour-blind-safe palette (its yellow left out: too pale on white).
const char* const kColours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                "#CC79A7", "#56B4E9", "#000000", "#999999"};
constexpr size_t kColourCount = sizeof(kColours) / sizeof(kColours[0]);

constexpr double kChartWidth = 520, kChartHeight = 320;
constexpr double kLeft = 72, kRight = 18, kTop = 34, kBottom = 52;  // the plot area's margins
constexpr double kFigureMargin = 16, kTitleHeight = 34, kLegendRow = 22;
constexpr const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

std::string fixed(double value, int decimals = 1) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// Text width in pixels at `size`, for laying out the legend (DejaVu Sans averages ~0.6 em).
double text_width(const std::string& text, double size) {
  return 0.6 * size * static_cast<double>(text.size());
}

// Text broken at spaces into lines no wider than `width` at `size`; a word wider than a line
// is cut and ends in "...".
std::vector<std::string> wrapped(const std::string& text, double width, double size) {
  const auto max_chars = static_cast<size_t>(std::max(4.0, width / (0.6 * size)));
  std::vector<std::string> lines;
  std::string line;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (word.size() > max_chars) word = word.substr(0, max_chars - 3) + "...";
    if (!line.empty() && line.size() + 1 + word.size() > max_chars) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

// One line of at most `width`: cut at a word where it can be, ending in "...".
std::string shortened(const std::string& text, double width, double size) {
  const auto lines = wrapped(text, width, size);
  if (lines.size() == 1) return lines.front();
  const auto max_chars = static_cast<size_t>(std::max(4.0, width / (0.6 * size)));
  std::string line = lines.front();
  if (line.size() + 3 > max_chars) line = line.substr(0, max_chars - 3);
  return line + "...";
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// One axis: where a value goes on the page, and its ticks.
struct Axis {
  double lo = 0, hi = 1;    // the data range drawn (log2 of it on a log axis)
  double from = 0, to = 1;  // page coordinates of lo and hi
  bool log = false;
  std::vector<double> ticks;  // in data units
  double spacing = 1;         // between ticks, in data units (linear axes)

  double at(double v) const {
    const double u = log ? std::log2(v) : v;
    return from + (u - lo) / (hi - lo) * (to - from);
  }
};

Axis linear_axis(Range range, double from, double to, int count) {
  Axis axis;
  if (range.empty()) range = {0, 1};
  if (range.lo == range.hi) {
    const double pad = range.lo == 0 ? 1 : std::abs(range.lo) * 0.1;
    range = {range.lo - pad, range.hi + pad};
  }
  axis.ticks = nice_ticks(range.lo, range.hi, count);
  axis.spacing = axis.ticks.size() > 1 ? axis.ticks[1] - axis.ticks[0] : 1;
  axis.lo = std::min(range.lo, axis.ticks.front());
  axis.hi = std::max(range.hi, axis.ticks.back());
  axis.from = from;
  axis.to = to;
  return axis;
}

// Ticks at the powers of two in the range (every second one when there are many).
Axis log2_axis(Range range, double from, double to) {
  Axis axis;
  axis.log = true;
  axis.lo = std::floor(std::log2(range.lo));
  axis.hi = std::ceil(std::log2(range.hi));
  if (axis.hi == axis.lo) {
    axis.lo -= 1;
    axis.hi += 1;
  }
  const int stride = axis.hi - axis.lo > 10 ? 2 : 1;
  for (double e = axis.lo; e <= axis.hi; e += stride) axis.ticks.push_back(std::exp2(e));
  axis.spacing = 1;
  axis.from = from;
  axis.to = to;
  return axis;
}

// A plot's frame: the corners of its drawing area and its axes.
struct PlotArea {
  double x0, x1, y0, y1;  // left, right, bottom, top
  Axis x, y;
  bool empty;  // no finite value to draw
};

PlotArea plot_area(const Chart& chart, double left, double top) {
  const double x0 = left + kLeft, x1 = left + kChartWidth - kRight;
  const double y0 = top + kChartHeight - kBottom, y1 = top + kTop;
  Range xs, ys;
  for (const auto& line : chart.lines) {
    for (size_t i = 0; i < line.x.size() && i < line.y.size(); ++i) {
      if (!std::isfinite(line.x[i]) || !std::isfinite(line.y[i])) continue;
      if (chart.log_x && line.x[i] <= 0) continue;
      xs.add(line.x[i]);
      ys.add(line.y[i]);
    }
  }
  if (chart.y_from_zero && !ys.empty()) ys.add(0);
  const Axis x = chart.log_x && !xs.empty() ? log2_axis(xs, x0, x1) : linear_axis(xs, x0, x1, 6);
  const Axis y = linear_axis(ys, y0, y1, 5);
  return {x0, x1, y0, y1, x, y, xs.empty()};
}

// The grid, the ticks and their values.
void draw_grid(std::ostringstream& svg, const PlotArea& area) {
  const double x0 = area.x0, x1 = area.x1, y0 = area.y0, y1 = area.y1;
  const Axis &x = area.x, &y = area.y;
  for (double t : y.ticks) {
    const double py = y.at(t);
    svg << "<line x1=\"" << fixed(x0) << "\" y1=\"" << fixed(py) << "\" x2=\"" << fixed(x1)
        << "\" y2=\"" << fixed(py) << "\" stroke=\"#dddddd\" stroke-width=\"1\"/>\n"
        << "<text x=\"" << fixed(x0 - 6) << "\" y=\"" << fixed(py + 4)
        << "\" text-anchor=\"end\" font-size=\"11\">" << xml_escaped(tick_text(t, y.spacing))
        << "</text>\n";
  }
  for (double t : x.ticks) {
    const double px = x.at(t);
    svg << "<line x1=\"" << fixed(px) << "\" y1=\"" << fixed(y0) << "\" x2=\"" << fixed(px)
        << "\" y2=\"" << fixed(y1) << "\" stroke=\"#eeeeee\" stroke-width=\"1\"/>\n"
        << "<line x1=\"" << fixed(px) << "\" y1=\"" << fixed(y0) << "\" x2=\"" << fixed(px)
        << "\" y2=\"" << fixed(y0 + 4) << "\" stroke=\"#333333\" stroke-width=\"1\"/>\n"
        << "<text x=\"" << fixed(px) << "\" y=\"" << fixed(y0 + 17)
        << "\" text-anchor=\"middle\" font-size=\"11\">"
        << xml_escaped(x.log ? power_of_two_text(t) : tick_text(t, x.spacing)) << "</text>\n";
  }
}

// The axes, their labels, and "no values" on an empty chart.
void draw_axes(std::ostringstream& svg, const Chart& chart, const PlotArea& area, double left) {
  const double x0 = area.x0, x1 = area.x1, y0 = area.y0, y1 = area.y1;
  const Axis &x = area.x, &y = area.y;
  svg << "<polyline points=\"" << fixed(x0) << "," << fixed(y1) << " " << fixed(x0) << ","
      << fixed(y0) << " " << fixed(x1) << "," << fixed(y0)
      << "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n"
      << "<text x=\"" << fixed((x0 + x1) / 2) << "\" y=\"" << fixed(y0 + 38)
      << "\" text-anchor=\"middle\" font-size=\"12\">" << xml_escaped(chart.x_label) << "</text>\n"
      << "<text transform=\"translate(" << fixed(left + 16) << "," << fixed((y0 + y1) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">" << xml_escaped(chart.y_label)
      << "</text>\n";
  if (area.empty) {
    svg << "<text x=\"" << fixed((x0 + x1) / 2) << "\" y=\"" << fixed((y0 + y1) / 2)
        << "\" text-anchor=\"middle\" font-size=\"12\" fill=\"#666666\">no values</text>\n";
  }
}

// The lines, and a dot on every point of a line with few of them.
void draw_lines(std::ostringstream& svg, const Chart& chart, const PlotArea& area,
                const std::map<std::string, size_t>& colour_of) {
  const auto& x = area.x;
  const auto& y = area.y;
  for (const auto& line : chart.lines) {
    const char* colour = kColours[colour_of.at(line.label) % kColourCount];
    std::ostringstream path;
    size_t finite = 0;
    bool pen_down = false;
    for (size_t i = 0; i < line.x.size() && i < line.y.size(); ++i) {
      const bool ok =
          std::isfinite(line.x[i]) && std::isfinite(line.y[i]) && !(chart.log_x && line.x[i] <= 0);
      if (!ok) {
        pen_down = false;
        continue;
      }
      path << (pen_down ? " L" : " M") << fixed(x.at(line.x[i])) << " " << fixed(y.at(line.y[i]));
      pen_down = true;
      ++finite;
    }
    if (finite == 0) continue;
    if (!line.dots) {
      svg << "<path d=\"" << path.str().substr(1) << "\" fill=\"none\" stroke=\"" << colour
          << "\" stroke-width=\"2\" stroke-linejoin=\"round\""
          << (line.dashed ? " stroke-dasharray=\"7 4\"" : "") << "/>\n";
    }
    if (finite <= 40 || line.dots) {
      for (size_t i = 0; i < line.x.size() && i < line.y.size(); ++i) {
        if (!std::isfinite(line.x[i]) || !std::isfinite(line.y[i])) continue;
        if (chart.log_x && line.x[i] <= 0) continue;
        svg << "<circle cx=\"" << fixed(x.at(line.x[i])) << "\" cy=\"" << fixed(y.at(line.y[i]))
            << "\" r=\"3\" fill=\"" << colour << "\"/>\n";
      }
    }
  }
}

void draw_chart(std::ostringstream& svg, const Chart& chart, double left, double top,
                const std::map<std::string, size_t>& colour_of) {
  const PlotArea area = plot_area(chart, left, top);
  svg << "<g>\n<text x=\"" << fixed(left + kChartWidth / 2) << "\" y=\"" << fixed(top + 22)
      << "\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">"
      << xml_escaped(shortened(chart.title, kChartWidth - 24, 14)) << "</text>\n";
  draw_grid(svg, area);
  draw_axes(svg, chart, area, left);
  draw_lines(svg, chart, area, colour_of);
  svg << "</g>\n";
}

}  // namespace

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo) || count < 1) return {lo};
  const double rough = (hi - lo) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= rough) break;
  }
  const double first = std::floor(lo / step), last = std::ceil(hi / step);
  // values from a damaged file (1e308 next to 0) leave no round ticks to count: the ends only
  if (!std::isfinite(rough) || !std::isfinite(first) || !std::isfinite(last) ||
      last - first > 10.0 * count || std::abs(first) > 1e15 || std::abs(last) > 1e15)
    return {lo, hi};
  std::vector<double> ticks;
  for (double k = first; k <= last + 0.5; ++k) ticks.push_back(k * step == 0 ? 0 : k * step);
  return ticks;
}

std::string tick_text(double value, double spacing) {
  if (value == 0) return "0";
  const double magnitude = std::max(std::abs(value), std::abs(spacing));
  const auto trimmed = [](double v, int decimals) {
    std::string s = fixed(v, decimals);
    if (s.find('.') != std::string::npos) {
      s.erase(s.find_last_not_of('0') + 1);
      if (s.back() == '.') s.pop_back();
    }
    return s == "-0" ? std::string("0") : s;
  };
  if (magnitude >= 1e6 && spacing >= 1e5) return trimmed(value / 1e6, 2) + "M";
  if (magnitude >= 1e4 && spacing >= 1e3) return trimmed(value / 1e3, 2) + "k";
  const int decimals =
      spacing > 0 ? std::max(0, static_cast<int>(std::ceil(-std::log10(spacing) - 1e-9))) : 3;
  return trimmed(value, std::min(decimals, 8));
}

std::string power_of_two_text(double value) {
  const double exponent = std::round(std::log2(value));
  if (value <= 0 || std::exp2(exponent) != value) return tick_text(value, value);
  if (exponent >= 0) return fixed(value, 0);
  // 2^-k has exactly k decimals: written out while short, else as a power
  if (exponent >= -6) return fixed(value, static_cast<int>(-exponent));
  return "2^" + std::to_string(static_cast<int>(exponent));
}

std::string render_svg(const Figure& figure) {
  // colours follow the labels in the order they first appear
  std::map<std::string, size_t> colour_of;
  std::vector<std::string> labels;
  for (const auto& chart : figure.charts) {
    for (const auto& line : chart.lines) {
      if (colour_of.emplace(line.label, labels.size()).second) labels.push_back(line.label);
    }
  }
  const size_t columns = figure.charts.size() > 1 ? 2 : 1;
  const size_t rows = (std::max<size_t>(figure.charts.size(), 1) + columns - 1) / columns;
  const double width = 2 * kFigureMargin + static_cast<double>(columns) * kChartWidth;

  // the legend, wrapped to the figure's width
  struct Entry {
    std::string label;
    double x, y;
  };
  std::vector<Entry> legend;
  // the title wrapped to the figure's width: a long one takes lines, never runs off the edge
  const auto title_lines = wrapped(figure.title, width - 2 * kFigureMargin, 17);
  const double title_extra = 22.0 * static_cast<double>(title_lines.size() - 1);
  double lx = kFigureMargin, ly = kFigureMargin + kTitleHeight + title_extra;
  for (const auto& label : labels) {
    const double w = 30 + text_width(label, 12) + 18;
    if (lx + w > width - kFigureMargin && lx > kFigureMargin) {
      lx = kFigureMargin;
      ly += kLegendRow;
    }
    legend.push_back({label, lx, ly});
    lx += w;
  }
  const double charts_top = labels.empty() ? ly : ly + kLegendRow;
  const double height = charts_top + static_cast<double>(rows) * kChartHeight + kFigureMargin;

  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fixed(width, 0) << "\" height=\""
      << fixed(height, 0) << "\" viewBox=\"0 0 " << fixed(width, 0) << " " << fixed(height, 0)
      << "\" font-family=\"" << kFont << "\" fill=\"#1a1a1a\">\n"
      << "<title>" << xml_escaped(figure.title) << "</title>\n"
      << "<rect x=\"0\" y=\"0\" width=\"" << fixed(width, 0) << "\" height=\"" << fixed(height, 0)
      << "\" rx=\"6\" fill=\"#ffffff\"/>\n";
  for (size_t i = 0; i < title_lines.size(); ++i) {
    svg << "<text x=\"" << fixed(kFigureMargin) << "\" y=\""
        << fixed(kFigureMargin + 18 + 22.0 * static_cast<double>(i))
        << "\" font-size=\"17\" font-weight=\"bold\">" << xml_escaped(title_lines[i])
        << "</text>\n";
  }
  for (const auto& entry : legend) {
    const char* colour = kColours[colour_of.at(entry.label) % kColourCount];
    svg << "<line x1=\"" << fixed(entry.x) << "\" y1=\"" << fixed(entry.y + 6) << "\" x2=\""
        << fixed(entry.x + 22) << "\" y2=\"" << fixed(entry.y + 6) << "\" stroke=\"" << colour
        << "\" stroke-width=\"3\"/>\n"
        << "<text x=\"" << fixed(entry.x + 28) << "\" y=\"" << fixed(entry.y + 10)
        << "\" font-size=\"12\">" << xml_escaped(entry.label) << "</text>\n";
  }
  for (size_t i = 0; i < figure.charts.size(); ++i) {
    const double left = kFigureMargin + static_cast<double>(i % columns) * kChartWidth;
    const double top = charts_top + static_cast<double>(i / columns) * kChartHeight;
    draw_chart(svg, figure.charts[i], left, top, colour_of);
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace engine::report
