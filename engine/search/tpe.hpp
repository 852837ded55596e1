// The Tree-structured Parzen Estimator (Bergstra et al. 2011; Optuna's default sampler), each
// hyperparameter on its own as Optuna's default does: the finished trials are split into the
// best few (gamma(n) = min(ceil(0.1 n), 25)) and the rest, a Parzen estimator (a Gaussian per
// trial on the space's scale, plus the prior: the whole range) is fitted to each group, and of
// 24 candidates drawn from the good group's estimator the one with the highest l(x) / g(x) is
// taken. Before `startup` trials have finished, values are drawn from the space as random
// search draws them.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/io/hparam.hpp"
#include "engine/search/space.hpp"

namespace engine::search {

struct Observation {
  std::map<std::string, io::HParam> hparams;
  double metric = 0;  // finite
};

struct TpeOptions {
  int64_t startup = 10;     // finished trials before the estimator is used
  int64_t candidates = 24;  // draws from l(x) compared by l(x) / g(x)
};

// One draw of every space, merged with the constants. `observations`: the finished trials;
// smaller_is_better orders them.
std::map<std::string, io::HParam> tpe_sample(const SearchSpace& space,
                                             const std::vector<Observation>& observations,
                                             bool smaller_is_better, std::mt19937_64& random,
                                             const TpeOptions& options = {});

}  // namespace engine::search
