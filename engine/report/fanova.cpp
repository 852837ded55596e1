#include "engine/report/fanova.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace engine::report {
namespace {

// sklearn's: feature values closer than this are one value, and a node whose squared error is
// at most machine epsilon is pure.
constexpr double kSameValue = 1e-7;
constexpr double kPure = std::numeric_limits<double>::epsilon();

class TreeGrower {
 public:
  TreeGrower(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
             const std::vector<double>& weight, int max_depth, std::mt19937_64& random)
      : x_(x), y_(y), weight_(weight), max_depth_(max_depth), random_(random) {}

  RegressionTree grow(std::vector<int> samples) {
    grow_node(std::move(samples), 0);
    return std::move(tree_);
  }

 private:
  struct Split {
    int feature = -1;
    double threshold = 0, proxy = -std::numeric_limits<double>::infinity();
  };

  int add_leaf(double value) {
    tree_.left.push_back(-1);
    tree_.right.push_back(-1);
    tree_.feature.push_back(-1);
    tree_.threshold.push_back(-2);  // sklearn's mark for a leaf
    tree_.value.push_back(value);
    return static_cast<int>(tree_.value.size()) - 1;
  }

  // The split that most lowers the weighted squared error: the largest sum^2/weight of both
  // sides (sklearn's proxy), features visited in a random order, the first best kept.
  Split best_split(std::vector<int>& samples) {
    const size_t columns = x_.front().size();
    std::vector<int> order(columns);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random_);
    double total_weight = 0, total_sum = 0;
    for (int s : samples) {
      total_weight += weight_[s];
      total_sum += weight_[s] * y_[s];
    }
    Split best;
    for (int f : order) {
      std::stable_sort(samples.begin(), samples.end(),
                       [&](int a, int b) { return x_[a][f] < x_[b][f]; });
      if (x_[samples.back()][f] <= x_[samples.front()][f] + kSameValue) continue;  // constant
      double left_weight = 0, left_sum = 0;
      for (size_t p = 0; p + 1 < samples.size(); ++p) {
        const int s = samples[p];
        left_weight += weight_[s];
        left_sum += weight_[s] * y_[s];
        const double here = x_[s][f], next = x_[samples[p + 1]][f];
        if (next <= here + kSameValue) continue;
        const double right_weight = total_weight - left_weight, right_sum = total_sum - left_sum;
        const double proxy =
            left_sum * left_sum / left_weight + right_sum * right_sum / right_weight;
        if (proxy > best.proxy) {
          double threshold = (here + next) / 2;
          if (threshold == next || !std::isfinite(threshold)) threshold = here;
          best = {f, threshold, proxy};
        }
      }
    }
    return best;
  }

  int grow_node(std::vector<int> samples, int depth) {
    double weight = 0, sum = 0, squares = 0;
    for (int s : samples) {
      weight += weight_[s];
      sum += weight_[s] * y_[s];
      squares += weight_[s] * y_[s] * y_[s];
    }
    const double mean = sum / weight, error = squares / weight - mean * mean;
    const int node = add_leaf(mean);
    if (depth >= max_depth_ || samples.size() < 2 || error <= kPure) return node;
    const Split split = best_split(samples);
    if (split.feature < 0) return node;
    std::vector<int> left, right;
    for (int s : samples) (x_[s][split.feature] <= split.threshold ? left : right).push_back(s);
    const int left_node = grow_node(std::move(left), depth + 1);
    const int right_node = grow_node(std::move(right), depth + 1);
    tree_.left[node] = left_node;
    tree_.right[node] = right_node;
    tree_.feature[node] = split.feature;
    tree_.threshold[node] = split.threshold;
    return node;
  }

  const std::vector<std::vector<double>>& x_;
  const std::vector<double>& y_;
  const std::vector<double>& weight_;
  int max_depth_;
  std::mt19937_64& random_;
  RegressionTree tree_;
};

using Box = std::vector<Bounds>;

double volume(const Box& box) {
  double v = 1;
  for (const auto& b : box) v *= b.high - b.low;
  return v;
}

// A weighted mean and the weighted variance around it.
std::pair<double, double> weighted_moments(const std::vector<double>& values,
                                           const std::vector<double>& weights) {
  double total = 0, sum = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    total += weights[i];
    sum += weights[i] * values[i];
  }
  const double mean = sum / total;
  double spread = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    spread += weights[i] * (values[i] - mean) * (values[i] - mean);
  }
  return {mean, spread / total};
}

// One tree's view for fANOVA: each node's mean prediction over its region of the space and the
// region's volume, and the splits every feature's axis is cut at.
class TreeMarginals {
 public:
  TreeMarginals(const RegressionTree& tree, const std::vector<Bounds>& bounds)
      : tree_(tree), bounds_(bounds), columns_(bounds.size()) {
    const size_t nodes = tree.value.size();
    std::vector<Box> boxes(nodes);
    boxes[0] = bounds;
    value_.assign(nodes, 0);
    weight_.assign(nodes, 0);
    // children come after their parent: regions top-down, statistics bottom-up
    for (size_t n = 0; n < nodes; ++n) {
      if (leaf(n)) continue;
      const int f = tree.feature[n];
      boxes[child(n, true)] = boxes[n];
      boxes[child(n, true)][f].high = tree.threshold[n];
      boxes[child(n, false)] = boxes[n];
      boxes[child(n, false)][f].low = tree.threshold[n];
    }
    active_.assign(nodes * columns_, 0);
    cuts_.assign(columns_, {});
    for (size_t n = nodes; n-- > 0;) {
      if (leaf(n)) {
        value_[n] = tree.value[n];
        weight_[n] = volume(boxes[n]);
        continue;
      }
      const size_t l = child(n, true), r = child(n, false);
      weight_[n] = weight_[l] + weight_[r];
      value_[n] = (value_[l] * weight_[l] + value_[r] * weight_[r]) / weight_[n];
      for (size_t c = 0; c < columns_; ++c) {
        active_[n * columns_ + c] = active_[l * columns_ + c] || active_[r * columns_ + c];
      }
      active_[n * columns_ + static_cast<size_t>(tree.feature[n])] = 1;
      cuts_[static_cast<size_t>(tree.feature[n])].push_back(tree.threshold[n]);
    }
    for (auto& cuts : cuts_) {
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    }
    std::vector<double> values, weights;
    for (size_t n = 0; n < nodes; ++n) {
      if (!leaf(n)) continue;
      values.push_back(value_[n]);
      weights.push_back(weight_[n]);
    }
    variance_ = weighted_moments(values, weights).second;
  }

  double variance() const { return variance_; }

  // The variance of the prediction marginalised over every column but `group`'s, across the
  // cells the tree's cuts make of the group's columns (each cell by its size).
  double marginal_variance(const ColumnGroup& group) const {
    std::vector<std::vector<double>> mids(group.size()), sizes(group.size());
    for (size_t g = 0; g < group.size(); ++g) {
      const auto c = static_cast<size_t>(group[g]);
      std::vector<double> edges{bounds_[c].low};
      edges.insert(edges.end(), cuts_[c].begin(), cuts_[c].end());
      edges.push_back(bounds_[c].high);
      for (size_t i = 0; i + 1 < edges.size(); ++i) {
        mids[g].push_back(edges[i] / 2 + edges[i + 1] / 2);
        sizes[g].push_back(edges[i + 1] - edges[i]);
      }
    }
    std::vector<char> in_group(columns_, 0);
    for (int c : group) in_group[static_cast<size_t>(c)] = 1;
    std::vector<size_t> at(group.size(), 0);  // the cell: an index per column of the group
    std::vector<double> point(columns_, 0), values, weights;
    while (true) {
      double size = 1;
      for (size_t g = 0; g < group.size(); ++g) {
        point[static_cast<size_t>(group[g])] = mids[g][at[g]];
        size *= sizes[g][at[g]];
      }
      const auto [value, weight] = marginal_at(point, in_group);
      values.push_back(value);
      weights.push_back(weight * size);
      size_t g = 0;
      while (g < group.size() && ++at[g] == mids[g].size()) at[g++] = 0;
      if (g == group.size()) break;
    }
    return std::max(0.0, weighted_moments(values, weights).second);
  }

 private:
  bool leaf(size_t n) const { return tree_.feature[n] < 0; }
  size_t child(size_t n, bool left) const {
    return static_cast<size_t>(left ? tree_.left[n] : tree_.right[n]);
  }

  // The mean prediction at `point` (only the group's columns set), the others averaged over
  // their whole range, and its weight.
  std::pair<double, double> marginal_at(const std::vector<double>& point,
                                        const std::vector<char>& in_group) const {
    Box start = bounds_;
    for (size_t c = 0; c < columns_; ++c) {
      if (!in_group[c]) start[c] = {0, 1};
    }
    std::vector<std::pair<size_t, Box>> pending{{0, start}};
    std::vector<double> values, weights;
    while (!pending.empty()) {
      auto [n, box] = std::move(pending.back());
      pending.pop_back();
      if (!leaf(n)) {
        const auto f = static_cast<size_t>(tree_.feature[n]);
        if (in_group[f]) {
          const bool left = point[f] <= tree_.threshold[n];
          (left ? box[f].high : box[f].low) = tree_.threshold[n];
          pending.emplace_back(child(n, left), std::move(box));
          continue;
        }
        bool splits_group = false;
        for (size_t c = 0; c < columns_ && !splits_group; ++c) {
          splits_group = in_group[c] && active_[n * columns_ + c];
        }
        if (splits_group) {
          pending.emplace_back(child(n, true), box);
          pending.emplace_back(child(n, false), std::move(box));
          continue;
        }
      }
      values.push_back(value_[n]);
      weights.push_back(weight_[n] / volume(box));
    }
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    return {weighted_moments(values, weights).first, total};
  }

  const RegressionTree& tree_;
  const std::vector<Bounds>& bounds_;
  size_t columns_;
  std::vector<double> value_, weight_;
  std::vector<char> active_;  // node x column: the node's subtree splits on the column
  std::vector<std::vector<double>> cuts_;
  double variance_ = 0;
};

}  // namespace

std::vector<RegressionTree> grow_forest(const std::vector<std::vector<double>>& x,
                                        const std::vector<double>& y, int trees, int max_depth,
                                        uint64_t seed) {
  std::vector<RegressionTree> forest;
  if (x.empty()) return forest;
  std::mt19937_64 random(seed);
  const int n = static_cast<int>(x.size());
  std::uniform_int_distribution<int> draw(0, n - 1);
  for (int t = 0; t < trees; ++t) {
    std::vector<double> counts(x.size(), 0);  // a bootstrap sample as weights
    for (int i = 0; i < n; ++i) counts[static_cast<size_t>(draw(random))] += 1;
    std::vector<int> samples;
    for (int i = 0; i < n; ++i) {
      if (counts[static_cast<size_t>(i)] > 0) samples.push_back(i);
    }
    forest.push_back(TreeGrower(x, y, counts, max_depth, random).grow(std::move(samples)));
  }
  return forest;
}

std::vector<double> fanova_importance(const std::vector<RegressionTree>& forest,
                                      const std::vector<Bounds>& bounds,
                                      const std::vector<ColumnGroup>& groups) {
  std::vector<double> importance(groups.size(), 0);
  size_t counted = 0;
  for (const auto& tree : forest) {
    const TreeMarginals marginals(tree, bounds);
    if (!(marginals.variance() > 0)) continue;  // a tree of one leaf explains nothing
    ++counted;
    for (size_t g = 0; g < groups.size(); ++g) {
      importance[g] += marginals.marginal_variance(groups[g]) / marginals.variance();
    }
  }
  const double total = std::accumulate(importance.begin(), importance.end(), 0.0);
  if (counted == 0 || !(total > 0)) return {};
  for (auto& v : importance) v /= total;  // the mean over trees, normalised: the count cancels
  return importance;
}

}  // namespace engine::report
