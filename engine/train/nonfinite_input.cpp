#include "engine/train/nonfinite_input.hpp"

#include <optional>
#include <utility>
#include <vector>

#include "engine/core/format.hpp"

namespace engine::train {
namespace {

struct Found {
  int64_t row = 0;
  double value = 0;
};

// The first row of `t` (samples along dimension 0) holding a value that is not finite.
std::optional<Found> first_nonfinite_row(const torch::Tensor& t) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0 || t.dim() == 0) return {};
  const auto rows = t.detach().reshape({t.size(0), -1}).to(torch::kCPU, torch::kFloat64);
  const auto bad = rows.isfinite().logical_not().any(1);
  const auto at = bad.nonzero();
  if (at.numel() == 0) return {};
  const int64_t row = at[0][0].item<int64_t>();
  const auto values = rows[row];
  const int64_t column = values.isfinite().logical_not().nonzero()[0][0].item<int64_t>();
  return Found{row, values[column].item<double>()};
}

}  // namespace

std::string nonfinite_input_note(const data::Batch& batch, const std::string& source) {
  std::vector<std::pair<std::string, const torch::Tensor*>> parts = {{"input", &batch.input}};
  for (const auto& [key, tensor] : batch.inputs) parts.emplace_back("input '" + key + "'", &tensor);
  parts.emplace_back("target", &batch.target);
  for (const auto& [what, tensor] : parts) {
    const auto found = first_nonfinite_row(*tensor);
    if (!found) continue;
    std::string sample = "sample " + std::to_string(found->row + 1) + " of the batch";
    const auto& indices = batch.indices;
    if (indices.defined() && indices.dim() == 1 && found->row < indices.size(0)) {
      // the source's own numbering, 0-based as the data file's rows are
      sample +=
          " (row " + std::to_string(indices[found->row].item<int64_t>()) + " of " + source + ")";
    } else {
      sample += " (from " + source + ")";
    }
    return "; " + sample + " holds " + core::number_string(found->value) + " in its " + what +
           ": the data, not the training, made the loss non-finite";
  }
  return "";
}

}  // namespace engine::train
