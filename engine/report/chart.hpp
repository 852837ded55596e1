// Line charts drawn as SVG, with nothing but the standard library: axes with round ticks,
// axis labels with their units, a title per chart and one legend per figure. A figure is a
// white card, so it reads the same in a light and in a dark viewer; rsvg-convert turns it into
// PNG (chart_file.hpp).
#pragma once

#include <string>
#include <vector>

namespace engine::report {

struct Line {
  std::string label;         // the legend's entry; the same label has the same colour everywhere
  std::vector<double> x, y;  // a point whose x or y is not finite breaks the line
  bool dots = false;         // points only, unjoined (a scatter)
  bool dashed = false;       // a second series of the same label (a run's validation curve)
};

struct Chart {
  std::string title;
  std::string x_label, y_label;  // with their units: "step", "throughput (samples/s)"
  std::vector<Line> lines;
  bool log_x = false;        // a base-2 x axis (batch sizes, threads, processes)
  bool y_from_zero = false;  // the y axis starts at 0 (rates, where a cut axis misleads)
};

struct Figure {
  std::string title;
  std::vector<Chart> charts;  // drawn in a grid of up to two columns
};

// About `count` round values (1, 2 or 5 times a power of ten) from at most `lo` to at least
// `hi`, evenly spaced; {lo} when lo == hi.
std::vector<double> nice_ticks(double lo, double hi, int count);

// A tick's text: as many decimals as the ticks' spacing needs, thousands as "12k", millions
// as "1.5M".
std::string tick_text(double value, double spacing);
// A tick of a log2 axis, exactly: 1, 16, 1024, 16384; 0.5, 0.25, ... 0.015625 in full; from
// 2^-7 down "2^-7". A value that is no power of two: tick_text's.
std::string power_of_two_text(double value);

// Text for SVG and HTML: & < > " escaped.
std::string xml_escaped(const std::string& text);

// The figure as a standalone SVG document.
std::string render_svg(const Figure& figure);

}  // namespace engine::report
