#include "engine/data/subset_source.hpp"

#include <cmath>
#include <numeric>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::data {

SubsetSource::SubsetSource(std::shared_ptr<const Source> parent, std::vector<int64_t> indices,
                           std::string what)
    : parent_(std::move(parent)),
      indices_(std::move(indices)),
      index_tensor_(torch::tensor(indices_, torch::kInt64)),
      what_(std::move(what)) {}

torch::Tensor SubsetSource::parent_indices(const torch::Tensor& indices) const {
  return index_tensor_.index_select(0, indices.to(torch::kInt64));
}

Batch SubsetSource::gather(const torch::Tensor& indices) const {
  const auto mapped = parent_indices(indices);
  Batch batch = parent_->gather(mapped);
  if (!batch.indices.defined()) batch.indices = mapped;
  return batch;
}

Batch SubsetSource::gather_bytes(const torch::Tensor& indices) const {
  const auto mapped = parent_indices(indices);
  Batch batch = parent_->gather_bytes(mapped);
  if (!batch.indices.defined()) batch.indices = mapped;
  return batch;
}

std::string SubsetSource::describe() const {
  return parent_->describe() + " [" + what_ + ": " + std::to_string(size()) + " samples]";
}

void SubsetSource::save_state(const io::h5::Handle& data_group) const {
  parent_->save_state(data_group);
}

std::shared_ptr<Source> SubsetSource::prediction_source(const std::string& input,
                                                        const io::h5::Handle& saved) const {
  return parent_->prediction_source(input, saved);
}

std::vector<int64_t> split_sizes(const std::vector<double>& sizes, int64_t total) {
  if (sizes.size() < 2) {
    throw core::UsageError(":split takes two or more sizes, {0.9, 0.1} or {50000, 10000}");
  }
  const bool fractions = std::all_of(sizes.begin(), sizes.end(), [](double s) { return s <= 1; });
  std::vector<int64_t> counts;
  if (fractions) {
    double sum = 0;
    for (double s : sizes) {
      if (!(s > 0))
        throw core::UsageError(":split's fractions must be above 0, got " + core::number_string(s));
      sum += s;
      counts.push_back(static_cast<int64_t>(std::floor(s * static_cast<double>(total) + 1e-9)));
    }
    if (sum > 1 + 1e-9) {
      throw core::UsageError(":split's fractions sum to " + core::number_string(sum) +
                             ", more than the whole source");
    }
    if (std::abs(sum - 1) <= 1e-9) {  // the whole: what rounding left goes to the first part
      counts.front() += total - std::accumulate(counts.begin(), counts.end(), int64_t{0});
    }
  } else {
    for (double s : sizes) {
      if (s < 1 || s != std::floor(s)) {
        throw core::UsageError(
            ":split's sizes are fractions (all at most 1) or counts (whole "
            "numbers), got " +
            core::number_string(s));
      }
      counts.push_back(static_cast<int64_t>(s));
    }
    const int64_t sum = std::accumulate(counts.begin(), counts.end(), int64_t{0});
    if (sum > total) {
      throw core::UsageError(":split asks for " + std::to_string(sum) + " samples of a source of " +
                             std::to_string(total));
    }
  }
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 1) {
      throw core::UsageError(":split's part " + std::to_string(i + 1) + " would hold no sample (" +
                             std::to_string(total) + " samples in the source)");
    }
  }
  return counts;
}

}  // namespace engine::data
