// The repeats of one benchmark point merged into one result: every batch (with the repeat it
// belongs to), the summary of all of them, and the spread of the repeats' medians. A stored
// point's repeats can be taken up again, so that `--repeat R` on a sweep whose file holds
// fewer repeats adds only the missing ones.
#pragma once

#include <vector>

#include "engine/io/bench_file.hpp"

namespace engine::bench {

class Repeats {
 public:
  explicit Repeats(double unstable_spread) : unstable_spread_(unstable_spread) {}
  // Starts from a stored point's repeats (its batches must have been read).
  void add_stored(const io::BenchPoint& stored);
  // One more repeat's result, status ok.
  void add(const io::BenchPoint& one);
  int count() const { return static_cast<int>(p50s_.size()); }
  // The merged point: the first repeat's row and details with the summary of every batch.
  io::BenchPoint merged() const;

 private:
  void take(const io::BenchPoint& one, double p50_ms);

  double unstable_spread_;
  io::BenchPoint merged_;
  std::vector<double> p50s_;
  std::vector<double> pipelined_ms_;  // each repeat's, where it has one
};

}  // namespace engine::bench
