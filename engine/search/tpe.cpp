#include "engine/search/tpe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace engine::search {
namespace {

double number_of(const io::HParam& value) {
  if (const auto* d = std::get_if<double>(&value)) return *d;
  if (const auto* b = std::get_if<bool>(&value)) return *b ? 1 : 0;
  return 0;
}

// A numeric space on the scale it is searched on: the exponent for a log range, the value for
// the others (an integer range widened by half a step on each side, so each integer has its
// share).
struct Scale {
  double lo, hi;
  bool log;
  double base;
  bool integer;

  explicit Scale(const Space& s)
      : lo(s.kind == Space::Kind::kInt ? s.lo - 0.5 : s.lo),
        hi(s.kind == Space::Kind::kInt ? s.hi + 0.5 : s.hi),
        log(s.kind == Space::Kind::kLog),
        base(s.base),
        integer(s.kind == Space::Kind::kInt) {
    if (log) {
      lo = to_scale(s.lo);
      hi = to_scale(s.hi);
    }
  }
  double to_scale(double value) const { return log ? std::log(value) / std::log(base) : value; }
  io::HParam from_scale(double u) const {
    u = std::clamp(u, lo, hi);
    if (log) return std::pow(base, u);
    if (integer) return std::clamp(std::round(u), lo + 0.5, hi - 0.5);
    return u;
  }
};

// A mixture of Gaussians at the points (a bandwidth from the points' spread, as Scott's rule,
// kept between range / min(100, n + 1) and the range) and the prior, the range's uniform,
// weighted as one point more.
struct Parzen {
  std::vector<double> centres;
  double sigma = 1, lo = 0, hi = 1;

  Parzen(std::vector<double> points, double lo_, double hi_)
      : centres(std::move(points)), lo(lo_), hi(hi_) {
    const double range = hi - lo;
    const auto n = static_cast<double>(centres.size());
    double spread = range;
    if (centres.size() > 1) {
      double mean = 0, squares = 0;
      for (double c : centres) mean += c / n;
      for (double c : centres) squares += (c - mean) * (c - mean);
      spread = std::sqrt(squares / (n - 1));
    }
    // at least range / min(100, n + 1), as Optuna's "magic clip": a few points must not pin the
    // search to one spot
    sigma =
        std::clamp(1.06 * spread * std::pow(n + 1, -0.2), range / std::min(100.0, n + 1), range);
  }
  double density(double x) const {
    const double range = hi - lo;
    double sum = 1.0 / range;  // the prior
    for (double c : centres) {
      const double z = (x - c) / sigma;
      sum += std::exp(-0.5 * z * z) / (sigma * std::sqrt(2 * M_PI));
    }
    return sum / static_cast<double>(centres.size() + 1);
  }
  double draw(std::mt19937_64& random) const {
    std::uniform_int_distribution<size_t> which(0, centres.size());
    const size_t k = which(random);
    if (k == centres.size()) return std::uniform_real_distribution<double>(lo, hi)(random);
    for (int attempt = 0; attempt < 16; ++attempt) {  // truncated to the range
      const double x = std::normal_distribution<double>(centres[k], sigma)(random);
      if (x >= lo && x <= hi) return x;
    }
    return std::clamp(centres[k], lo, hi);
  }
};

io::HParam numeric_sample(const Space& space, const std::vector<const Observation*>& good,
                          const std::vector<const Observation*>& bad, const std::string& name,
                          std::mt19937_64& random, int64_t candidates) {
  const Scale scale(space);
  const auto points = [&](const std::vector<const Observation*>& group) {
    std::vector<double> out;
    for (const auto* o : group) {
      const auto it = o->hparams.find(name);
      if (it != o->hparams.end()) out.push_back(scale.to_scale(number_of(it->second)));
    }
    return out;
  };
  const Parzen l(points(good), scale.lo, scale.hi), g(points(bad), scale.lo, scale.hi);
  double best_x = l.draw(random), best = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < candidates; ++c) {
    const double x = c == 0 ? best_x : l.draw(random);
    const double score = std::log(l.density(x)) - std::log(g.density(x));
    if (score > best) {
      best = score;
      best_x = x;
    }
  }
  return scale.from_scale(best_x);
}

io::HParam choice_sample(const Space& space, const std::vector<const Observation*>& good,
                         const std::vector<const Observation*>& bad, const std::string& name,
                         std::mt19937_64& random, int64_t candidates) {
  const size_t k = space.values.size();
  // counts of each choice, plus one for the prior
  const auto weights = [&](const std::vector<const Observation*>& group) {
    std::vector<double> w(k, 1.0);
    for (const auto* o : group) {
      const auto it = o->hparams.find(name);
      if (it == o->hparams.end()) continue;
      for (size_t i = 0; i < k; ++i) {
        if (space.values[i] == it->second) w[i] += 1;
      }
    }
    return w;
  };
  const auto wl = weights(good), wg = weights(bad);
  double total_l = 0, total_g = 0;
  for (size_t i = 0; i < k; ++i) total_l += wl[i], total_g += wg[i];
  std::discrete_distribution<size_t> from_l(wl.begin(), wl.end());
  size_t best_i = from_l(random);
  double best = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < candidates; ++c) {
    const size_t i = c == 0 ? best_i : from_l(random);
    const double score = std::log(wl[i] / total_l) - std::log(wg[i] / total_g);
    if (score > best) {
      best = score;
      best_i = i;
    }
  }
  return space.values[best_i];
}

}  // namespace

std::map<std::string, io::HParam> tpe_sample(const SearchSpace& space,
                                             const std::vector<Observation>& observations,
                                             bool smaller_is_better, std::mt19937_64& random,
                                             const TpeOptions& options) {
  if (static_cast<int64_t>(observations.size()) < options.startup) return space.sample(random);
  std::vector<const Observation*> sorted;
  for (const auto& o : observations) sorted.push_back(&o);
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Observation* a, const Observation* b) {
    return smaller_is_better ? a->metric < b->metric : a->metric > b->metric;
  });
  const auto n = static_cast<double>(sorted.size());
  const auto n_good = static_cast<size_t>(std::min(std::ceil(0.1 * n), 25.0));
  const std::vector<const Observation*> good(sorted.begin(), sorted.begin() + n_good);
  const std::vector<const Observation*> bad(sorted.begin() + n_good, sorted.end());
  std::map<std::string, io::HParam> out = space.constants;
  for (const auto& [name, s] : space.spaces) {  // name order: the draws are reproducible
    switch (s.kind) {
      case Space::Kind::kConst:
        out[name] = s.values.front();
        break;
      case Space::Kind::kChoice:
        out[name] = choice_sample(s, good, bad, name, random, options.candidates);
        break;
      default:
        out[name] = numeric_sample(s, good, bad, name, random, options.candidates);
    }
  }
  return out;
}

}  // namespace engine::search
