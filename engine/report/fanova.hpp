// Hyperparameter importance as Optuna's default evaluator computes it (fANOVA, Hutter et al.,
// ICML 2014): a random forest regresses the searched metric on the trials' hyperparameters,
// and each hyperparameter's importance is the share of the forest's variance that its marginal
// explains, averaged over the trees and normalised to sum to 1. As in Optuna, numbers are taken
// as they are (no log transform) within their space's bounds, and a choice is one-hot encoded:
// a column in [0, 1] per choice, its importance that of its columns together.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine::report {

// A regression tree in sklearn's layout: node 0 the root; a leaf has feature -1.
struct RegressionTree {
  std::vector<int> left, right, feature;
  std::vector<double> threshold, value;
};

// A forest as Optuna's fANOVA grows it with sklearn's RandomForestRegressor (64 trees, depth at
// most 64, every feature at every split, a bootstrap sample per tree, splits at midpoints that
// most lower the squared error). The draws are the engine's own: the same seed, the same forest.
std::vector<RegressionTree> grow_forest(const std::vector<std::vector<double>>& x,
                                        const std::vector<double>& y, int trees, int max_depth,
                                        uint64_t seed);

// The columns of one hyperparameter (one for a number; a choice's one-hot columns).
using ColumnGroup = std::vector<int>;
struct Bounds {
  double low = 0, high = 1;
};

// Each group's importance on a forest (the mean over trees with any variance of the group's
// marginal variance over the tree's), normalised to sum to 1. Empty when no tree has variance
// (every trial had the same metric, or one trial).
std::vector<double> fanova_importance(const std::vector<RegressionTree>& forest,
                                      const std::vector<Bounds>& bounds,
                                      const std::vector<ColumnGroup>& groups);

}  // namespace engine::report
