// engine predict's output: one line per sample, as CSV (a header line first) or JSON lines.
// Class outputs get the most likely label, its probability and every class's probability
// (softmax of the output: logits and log-probabilities alike); other outputs are written as
// they are. A class is its name where the classes have names, else its 1-based number (a
// number in JSON). Numbers carry 9 significant digits, as a float holds.
#pragma once

#include <torch/types.h>

#include <ostream>
#include <string>
#include <vector>

namespace engine::io {

enum class PredictionFormat { kCsv, kJsonLines };

class PredictionWriter {
 public:
  // classes: the class labels (empty: "1", "2"... by position); class_output: the model's
  // outputs are class scores.
  PredictionWriter(std::ostream& out, PredictionFormat format, std::vector<std::string> classes,
                   bool class_output);
  // rows: the samples' 0-based row numbers in the input; output: N x K (or N) per sample;
  // paths: the file each sample came from (an image), a "path" column after "row", or empty.
  void write(const torch::Tensor& rows, const torch::Tensor& output,
             const std::vector<std::string>& paths = {});
  int64_t count() const { return count_; }

 private:
  void write_header(bool classes, int64_t width, bool paths);

  std::ostream& out_;
  PredictionFormat format_;
  std::vector<std::string> classes_, labels_;
  bool class_output_;
  bool header_done_ = false;
  int64_t count_ = 0;
};

}  // namespace engine::io
