#include "engine/io/prediction_writer.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>

#include "engine/io/csv_writer.hpp"

namespace engine::io {
namespace {

using Json = nlohmann::ordered_json;

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// The double that prints as number_text(v) does, so JSON and CSV show the same digits.
double rounded(double v) {
  return std::strtod(number_text(v).c_str(), nullptr);
}

}  // namespace

PredictionWriter::PredictionWriter(std::ostream& out, PredictionFormat format,
                                   std::vector<std::string> classes, bool class_output)
    : out_(out), format_(format), classes_(std::move(classes)), class_output_(class_output) {}

void PredictionWriter::write_header(bool classes, int64_t width, bool paths) {
  header_done_ = true;
  if (format_ != PredictionFormat::kCsv) return;
  std::vector<std::string> header{"row"};
  if (paths) header.push_back("path");
  header.push_back("prediction");
  if (classes) {
    header.push_back("probability");
    for (const auto& l : labels_) header.push_back("p_" + l);
  } else {
    for (int64_t k = 1; k < width; ++k) header.push_back("prediction_" + std::to_string(k + 1));
  }
  write_csv_row(out_, header);
}

void PredictionWriter::write(const torch::Tensor& rows, const torch::Tensor& output,
                             const std::vector<std::string>& paths) {
  auto o = output.detach().to(torch::kCPU, torch::kFloat64);
  if (o.dim() == 1) o = o.unsqueeze(1);
  o = o.reshape({o.size(0), -1});
  const int64_t width = o.size(1);
  const auto row_numbers = rows.to(torch::kCPU, torch::kInt64);
  const bool classes = class_output_ && width > 1;
  auto values = classes ? torch::softmax(o, 1) : o;
  if (classes && labels_.empty()) {
    for (int64_t c = 0; c < width; ++c) {
      labels_.push_back(c < static_cast<int64_t>(classes_.size()) ? classes_[c]
                                                                  : std::to_string(c + 1));
    }
  }
  if (!header_done_) write_header(classes, width, !paths.empty());
  const auto p = values.accessor<double, 2>();
  const auto r = row_numbers.accessor<int64_t, 1>();
  for (int64_t i = 0; i < o.size(0); ++i) {
    const int64_t row = r[i] + 1;
    int64_t best = 0;
    for (int64_t c = 1; classes && c < width; ++c) {
      if (p[i][c] > p[i][best]) best = c;
    }
    if (format_ == PredictionFormat::kJsonLines) {
      Json line{{"row", row}};
      if (!paths.empty()) line["path"] = paths.at(static_cast<size_t>(i));
      if (classes) {
        // a named class by its name, else by its 1-based number, as a number
        line["prediction"] = classes_.empty() ? Json(best + 1) : Json(labels_[best]);
        line["probability"] = rounded(p[i][best]);
        Json probabilities = Json::object();
        for (int64_t c = 0; c < width; ++c) probabilities[labels_[c]] = rounded(p[i][c]);
        line["probabilities"] = probabilities;
      } else if (width == 1) {
        line["prediction"] = rounded(p[i][0]);
      } else {
        Json list = Json::array();
        for (int64_t k = 0; k < width; ++k) list.push_back(rounded(p[i][k]));
        line["prediction"] = list;
      }
      out_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      continue;
    }
    std::vector<std::string> fields{std::to_string(row)};
    if (!paths.empty()) fields.push_back(paths.at(static_cast<size_t>(i)));
    if (classes) {
      fields.push_back(labels_[best]);
      fields.push_back(number_text(p[i][best]));
    }
    for (int64_t c = 0; c < width; ++c) fields.push_back(number_text(p[i][c]));
    write_csv_row(out_, fields);
  }
  count_ += o.size(0);
}

}  // namespace engine::io
