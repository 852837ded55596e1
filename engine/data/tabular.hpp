// data.csv: tabular data as in the classic census / taxi trainers. Numeric columns are
// standardised with the training split's mean and standard deviation; categorical columns map
// through the training split's vocabulary, with one out-of-vocabulary index for values never
// seen there; the target is a class (through the training split's class list) or a number.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/data/csv_reader.hpp"
#include "engine/data/source.hpp"

namespace engine::data {

// Everything learnt from the training split, so that validation and prediction use the same.
struct TabularStats {
  struct Numeric {
    std::string name;
    double mean = 0, std = 1;
  };
  struct Categorical {
    std::string name;
    std::vector<std::string> values;  // sorted; value i has index i, anything else values.size()
  };
  std::vector<Numeric> numeric;
  std::vector<Categorical> categorical;
  std::string target;                // empty: no target column
  bool class_target = true;          // false: the target is a float
  std::vector<std::string> classes;  // class_target: class i's label
};

enum class MissingValues { kError, kFill, kSkip };

struct CsvOptions {
  std::string path;
  std::string target;  // column name ("1", "2"... without a header); empty: none
  std::optional<std::vector<std::string>> numeric, categorical;  // unset: inferred
  bool header = true;
  char delimiter = ',';
  bool class_target = true;
  // kFill: numeric -> the training mean, categorical -> out of vocabulary; kSkip: drop the row
  MissingValues missing = MissingValues::kError;
  // pandas' usual markers; any other spelling of a NaN or an infinity is refused (tabular.cpp)
  std::vector<std::string> na = {"",    "NA",  "N/A",  "n/a",  "#N/A", "<NA>", "NaN",
                                 "nan", "NAN", "-NaN", "-nan", "null", "NULL", "?"};
  bool skip_bad = false;                      // log and drop malformed rows instead of stopping
  std::shared_ptr<const TabularStats> stats;  // the training split's; computed here when null
};

class CsvSource : public Source {
 public:
  explicit CsvSource(const CsvOptions& options);
  int64_t size() const override { return input_.size(0); }
  Batch gather(const torch::Tensor& indices) const override;
  std::string describe() const override;

  // The training statistics, under /data/train_stats (engine/data/tabular_state.cpp).
  void save_state(const io::h5::Handle& data_group) const override;
  // New rows read with the checkpoint's statistics (this source's, for a checkpoint without
  // any); the target column may be missing.
  std::shared_ptr<Source> prediction_source(const std::string& input,
                                            const io::h5::Handle& saved) const override;
  std::vector<std::string> class_names() const override;
  // A class target's classes: a label the training split lacks is a DataError when read.
  std::optional<int64_t> class_count() const override {
    if (!target_.defined() || !stats_->class_target) return std::nullopt;
    return static_cast<int64_t>(stats_->classes.size());
  }

  const std::shared_ptr<const TabularStats>& stats() const { return stats_; }
  const CsvOptions& options() const { return options_; }
  // bad or incomplete rows left out (skip_bad, missing = 'skip')
  int64_t skipped_at_load() const override { return skipped_rows_; }

 private:
  std::string path_;
  CsvOptions options_;
  std::shared_ptr<const TabularStats> stats_;
  torch::Tensor input_;        // N x numeric, standardised float32
  torch::Tensor categorical_;  // N x categorical, int64 indices
  torch::Tensor target_;
  int64_t skipped_rows_ = 0;
};

}  // namespace engine::data
