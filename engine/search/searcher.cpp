#include "engine/search/searcher.hpp"
#include "engine/core/statuses.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "engine/core/errors.hpp"
#include "engine/search/tpe.hpp"

namespace engine::search {
namespace {

bool one_of(const std::string& value, std::initializer_list<const char*> options) {
  for (const char* o : options) {
    if (value == o) return true;
  }
  return false;
}

}  // namespace

double metric_of(const Trial& trial) {
  return trial.rung_metrics.empty() ? NAN : trial.rung_metrics.back();
}

Searcher::Searcher(SearcherConfig config, SearchSpace space)
    : config_(std::move(config)), space_(std::move(space)) {
  const auto bad = [](const std::string& what) { throw core::UsageError("searcher: " + what); };
  const std::string& name = config_.name;
  if (!one_of(name, {"single", "grid", "random", "asha", "tpe"})) {
    bad("name '" + name + "' is not one of single, grid, random, asha, tpe");
  }
  if (name == "tpe") config_.sampler = "tpe";
  if (!one_of(config_.sampler, {"random", "tpe"})) {
    bad("sampler '" + config_.sampler + "' is not random or tpe");
  }
  if (config_.sampler == "tpe" && !one_of(name, {"random", "asha", "tpe"})) {
    bad("sampler tpe draws the trials of random and asha searches, not of " + name);
  }
  if (config_.metric.find('.') == std::string::npos) {
    bad("metric '" + config_.metric +
        "' names no split: write it as split.metric, e.g. validation.loss");
  }
  if (!one_of(config_.unit, {"epochs", "steps"})) {
    bad("unit '" + config_.unit + "' is not epochs or steps");
  }
  if ((name == "random" || name == "asha" || name == "tpe") && config_.max_trials < 1) {
    bad(name + " needs max_trials >= 1");
  }
  if (name == "asha") {
    if (config_.max_length < 1)
      bad("asha needs max_length >= 1 (a whole trial's " + config_.unit + ")");
    if (config_.max_rungs < 1) bad("asha needs max_rungs >= 1");
    if (!(config_.divisor > 1)) bad("asha needs divisor > 1");
  }
  if (config_.max_length < 0) bad("max_length must be >= 0");
  if (config_.max_concurrent_trials < 1) bad("max_concurrent_trials must be >= 1");
  if (config_.max_restarts < 0) bad("max_restarts must be >= 0");
  if (name == "grid") {
    grid_ = space_.grid();
    planned_ = static_cast<int64_t>(grid_.size());
  } else if (name == "single") {
    planned_ = 1;
  } else {
    planned_ = config_.max_trials;
  }
}

// A trial's draw depends on the seed and its id only: the same trials in the same order, however
// many run at once, and after a resume.
std::map<std::string, io::HParam> Searcher::hparams_of(int64_t id) const {
  if (config_.name == "grid") return grid_.at(static_cast<size_t>(id));
  std::seed_seq seeds{static_cast<uint32_t>(config_.seed),
                      static_cast<uint32_t>(config_.seed >> 32), static_cast<uint32_t>(id)};
  std::mt19937_64 random(seeds);
  if (config_.sampler != "tpe") return space_.sample(random);
  // what the finished trials measured: the last rung each reached (asha's stopped ones too)
  std::vector<Observation> observations;
  for (const auto& t : trials_) {
    const double m = metric_of(t);
    if (std::isfinite(m)) observations.push_back({t.hparams, m});
  }
  return tpe_sample(space_, observations, config_.smaller_is_better, random);
}

Trial& Searcher::trial(int64_t id) {
  for (auto& t : trials_) {
    if (t.id == id) return t;
  }
  throw std::out_of_range("no trial " + std::to_string(id));
}

int64_t Searcher::rung_length(int64_t rung) const {
  if (config_.name != "asha") return config_.max_length;
  const double length =
      static_cast<double>(config_.max_length) /
      std::pow(config_.divisor, static_cast<double>(config_.max_rungs - 1 - rung));
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(length - 1e-9)));
}

bool Searcher::better(double a, double b) const {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return config_.smaller_is_better ? a < b : a > b;
}

std::optional<Job> Searcher::new_trial() {
  while (next_id_ < planned_ && next_id_ % shards_ != shard_) ++next_id_;
  if (next_id_ >= planned_) return std::nullopt;
  Trial t;
  t.id = next_id_++;
  t.hparams = hparams_of(t.id);
  t.status = core::TrialStatus::kRunning;
  trials_.push_back(t);
  return Job{t.id, 0, rung_length(0)};
}

// ASHA (Li et al. 2020, asynchronous successive halving): a trial paused at rung k goes on to
// rung k + 1 once it is among the best floor(n_k / divisor) of the n_k trials that finished
// rung k; the highest rungs are looked at first.
std::optional<Job> Searcher::promotion() {
  for (int64_t k = config_.max_rungs - 2; k >= 0; --k) {
    std::vector<std::pair<double, Trial*>> finished;
    for (auto& t : trials_) {
      if (static_cast<int64_t>(t.rung_metrics.size()) > k) {
        finished.emplace_back(t.rung_metrics[static_cast<size_t>(k)], &t);
      }
    }
    const auto top =
        static_cast<size_t>(std::floor(static_cast<double>(finished.size()) / config_.divisor));
    if (top == 0) continue;
    std::stable_sort(finished.begin(), finished.end(),
                     [this](const auto& a, const auto& b) { return better(a.first, b.first); });
    for (size_t i = 0; i < top; ++i) {
      Trial& t = *finished[i].second;
      if (t.status == core::TrialStatus::kPaused && t.rung == k && !std::isnan(finished[i].first)) {
        t.rung = k + 1;
        t.status = core::TrialStatus::kRunning;
        return Job{t.id, t.rung, rung_length(t.rung)};
      }
    }
  }
  return std::nullopt;
}

std::optional<Job> Searcher::next() {
  if (!resumed_.empty()) {
    const Job job = resumed_.front();
    resumed_.erase(resumed_.begin());
    return job;
  }
  if (config_.name == "asha") {
    if (auto job = promotion()) return job;
  }
  return new_trial();
}

void Searcher::finished(const Job& job, double metric) {
  Trial& t = trial(job.trial);
  t.rung_metrics.resize(static_cast<size_t>(job.rung));  // a rung run again replaces its result
  t.rung_metrics.push_back(metric);
  t.rung = job.rung;
  const bool last_rung = config_.name != "asha" || job.rung >= config_.max_rungs - 1;
  t.status = last_rung ? core::TrialStatus::kCompleted : core::TrialStatus::kPaused;
}

void Searcher::failed(const Job& job, const std::string& reason) {
  Trial& t = trial(job.trial);
  t.status = core::TrialStatus::kFailed;
  t.reason = reason;
}

void Searcher::close() {
  for (auto& t : trials_) {
    if (t.status != core::TrialStatus::kPaused) continue;
    t.status = core::TrialStatus::kStopped;
    t.reason = "stopped early at rung " + std::to_string(t.rung) + ": not among the best 1/" +
               std::to_string(static_cast<int64_t>(config_.divisor)) + " of its rung";
  }
}

int64_t Searcher::running() const {
  return std::count_if(trials_.begin(), trials_.end(),
                       [](const Trial& t) { return t.status == core::TrialStatus::kRunning; });
}

std::optional<int64_t> Searcher::best() const {
  std::optional<int64_t> best;
  double best_metric = NAN;
  const int64_t top_rung = config_.name == "asha" ? config_.max_rungs - 1 : 0;
  // the trials that trained longest first: an early rung's metric is not comparable
  for (int64_t rung = top_rung; rung >= 0 && !best; --rung) {
    for (const auto& t : trials_) {
      if (static_cast<int64_t>(t.rung_metrics.size()) != rung + 1) continue;
      if (!best || better(metric_of(t), best_metric)) {
        if (std::isnan(metric_of(t))) continue;
        best = t.id;
        best_metric = metric_of(t);
      }
    }
  }
  return best;
}

void Searcher::restore(std::vector<Trial> trials) {
  trials_ = std::move(trials);
  resumed_.clear();
  for (auto& t : trials_) {
    next_id_ = std::max(next_id_, t.id + 1);
    // running: the search was killed with it; interrupted: stopped with the search (Ctrl-C)
    if (t.status == core::TrialStatus::kRunning || t.status == core::TrialStatus::kInterrupted) {
      t.status = core::TrialStatus::kRunning;
      resumed_.push_back(Job{t.id, t.rung, rung_length(t.rung)});
    }
  }
}

void Searcher::set_shard(int64_t shard, int64_t shards) {
  if (shards < 1 || shard < 0 || shard >= shards) {
    throw core::UsageError("--shard " + std::to_string(shard) + "/" + std::to_string(shards) +
                           ": the shard must be from 0 to " + std::to_string(shards - 1));
  }
  if (shards > 1 && config_.name != "grid" && config_.name != "random") {
    throw core::UsageError("--shard splits grid and random searches; " + config_.name +
                           " needs every trial's result in one place");
  }
  shard_ = shard;
  shards_ = shards;
}

}  // namespace engine::search
