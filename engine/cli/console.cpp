#include "engine/cli/console.hpp"

#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include "engine/core/format.hpp"
#include "engine/core/memory.hpp"

namespace engine::cli {
namespace {

constexpr double kTtyRefreshSeconds = 0.2;
constexpr double kPlainLineSeconds = 15.0;

// "1 step", "3 steps"; "1 NaN batch", "2 NaN batches"
std::string count_text(int64_t count, const std::string& noun) {
  const bool es = !noun.empty() && (noun.back() == 'h' || noun.back() == 's');
  return std::to_string(count) + " " + noun + (count == 1 ? "" : es ? "es" : "s");
}

std::string metrics_text(const std::map<std::string, double>& values) {
  std::string out;
  char buf[64];
  for (const auto& [name, v] : values) {
    if (name == "lr") continue;
    std::snprintf(buf, sizeof buf, "%s %.4f", name.c_str(), v);
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  return out;
}

}  // namespace

ConsoleObserver::ConsoleObserver(bool quiet) : quiet_(quiet), tty_(isatty(fileno(stdout)) != 0) {}

void ConsoleObserver::clear_line() {
  if (line_open_) {
    std::printf("\r\033[K");
    line_open_ = false;
  }
}

void ConsoleObserver::finish_line() {
  if (line_open_) {
    std::printf("\n");
    std::fflush(stdout);
    line_open_ = false;
  }
}

void ConsoleObserver::print_result(const train::TrainResult& r) {
  clear_line();
  std::printf("finished %lld steps in %s: %s (peak memory %.0f MiB)\n",
              static_cast<long long>(r.steps), core::duration_string(r.seconds).c_str(),
              r.stop_reason.c_str(), static_cast<double>(core::peak_resident_bytes()) / (1 << 20));
  std::set<std::string> names;
  for (const auto* m : {&r.last_train, &r.last_validation, &r.best_validation}) {
    for (const auto& [name, v] : *m) {
      if (name != "lr") names.insert(name);
    }
  }
  if (!names.empty()) {
    std::printf("  %-20s %12s %12s %12s\n", "metric", "last train", "last valid.", "best valid.");
    auto cell = [](const std::map<std::string, double>& m, const std::string& name) {
      auto it = m.find(name);
      char buf[32] = "-";
      if (it != m.end()) std::snprintf(buf, sizeof buf, "%.4f", it->second);
      return std::string(buf);
    };
    for (const auto& name : names) {
      std::printf("  %-20s %12s %12s %12s\n", name.c_str(), cell(r.last_train, name).c_str(),
                  cell(r.last_validation, name).c_str(), cell(r.best_validation, name).c_str());
    }
  }
  if (!r.last_checkpoint.empty()) {
    std::printf("checkpoint: %s%s\n", r.last_checkpoint.c_str(),
                r.best_checkpoint.empty() || r.best_checkpoint == r.last_checkpoint
                    ? ""
                    : (" (best: " + r.best_checkpoint + ")").c_str());
  }
  std::fflush(stdout);
}

void ConsoleObserver::on_progress(const train::Progress& p) {
  if (quiet_) return;
  const bool last = p.batch == p.batches;
  if (since_print_.seconds() < (tty_ ? kTtyRefreshSeconds : kPlainLineSeconds) && !(tty_ && last))
    return;
  since_print_.reset();
  char buf[256];
  const int width = static_cast<int>(std::to_string(p.batches).size());
  std::snprintf(buf, sizeof buf,
                "epoch %lld/%lld [%*lld/%lld] step %lld/%lld  loss %.4f  lr %.3g  %.0f samples/s  "
                "ETA %s",
                static_cast<long long>(p.epoch), static_cast<long long>(p.epochs), width,
                static_cast<long long>(p.batch), static_cast<long long>(p.batches),
                static_cast<long long>(p.step), static_cast<long long>(p.total_steps),
                p.loss ? p.loss() : 0.0, p.lr, p.samples_per_second,
                core::duration_string(p.eta_seconds).c_str());
  if (tty_) {
    // a bar of the epoch's batches in front of the figures
    constexpr int kWidth = 20;
    const int filled = p.batches > 0 ? static_cast<int>(kWidth * p.batch / p.batches) : 0;
    const std::string bar = std::string(static_cast<size_t>(filled), '#') +
                            std::string(static_cast<size_t>(kWidth - filled), '.');
    std::printf("\r\033[K[%s] %s", bar.c_str(), buf);
    line_open_ = true;
  } else {
    std::printf("%s\n", buf);
  }
  std::fflush(stdout);
}

void ConsoleObserver::on_epoch_end(const train::EpochSummary& s) {
  if (quiet_) return;
  clear_line();
  std::string line = "epoch " + std::to_string(s.epoch) + " done in " +
                     core::duration_string(s.seconds) + ": train " + metrics_text(s.train);
  if (!s.validation.empty()) line += " | validation " + metrics_text(s.validation);
  char buf[128];
  std::snprintf(buf, sizeof buf, " | %.0f samples/s, lr %g, loader wait %.1f%%",
                s.samples_per_second, s.lr, 100.0 * s.loader_wait_fraction);
  line += buf;
  if (s.nan_skipped > 0) line += " | " + count_text(s.nan_skipped, "NaN batch") + " skipped";
  if (s.overflow_skipped > 0) {
    line += " | " + count_text(s.overflow_skipped, "step") + " skipped (gradient overflow)";
  }
  if (s.skipped_records > 0) {
    line += " | " + count_text(s.skipped_records, "bad record") + " skipped";
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace engine::cli
