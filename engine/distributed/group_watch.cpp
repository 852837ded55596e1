#include "engine/distributed/group_watch.hpp"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <csignal>
#include <cstdio>
#include <thread>

#include "engine/core/child_process.hpp"
#include "engine/core/errors.hpp"
#include "engine/distributed/heartbeat.hpp"

namespace engine::distributed {
namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(2);
constexpr const char* kWatchCommand = "__watch_group";

c10::intrusive_ptr<c10d::Store> connect_watch(const std::string& address, int port) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(port);
  options.isServer = false;
  options.waitWorkers = false;
  options.timeout = kConnectTimeout;
  return c10::make_intrusive<c10d::TCPStore>(address, options);
}

// "m2 192.168.5.2", as host_identity gives it, becomes "m2, 192.168.5.2"
std::string host_text(const std::vector<uint8_t>& bytes) {
  std::string text(bytes.begin(), bytes.end());
  while (!text.empty() && text.back() == ' ') text.pop_back();
  const size_t space = text.find(' ');
  if (space != std::string::npos) text.replace(space, 1, ", ");
  for (char& c : text) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return text;
}

// One reading of every rank, as the watcher prints it; hosts already read are not read again.
std::string read_ranks(c10d::Store& store, std::vector<std::string>& hosts) {
  std::string line = "ok";
  for (size_t r = 0; r < hosts.size(); ++r) {
    const int rank = static_cast<int>(r);
    const int64_t count = store.add(Heartbeat::key(rank), 0);
    bool done = false;
    if (count > 0) {  // beating
      if (hosts[r].empty() && store.check({Heartbeat::host_key(rank)})) {
        hosts[r] = host_text(store.get(Heartbeat::host_key(rank)));
      }
      done = store.check({Heartbeat::done_key(rank)});
    }
    line += "\t" + std::to_string(count) + " " + (done ? "1" : "0") + " " + hosts[r];
  }
  return line;
}

// A number in [low, high]; a UsageError naming the argument otherwise.
int whole_number(const std::string& text, const std::string& what, int low, int high) {
  size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < low || value > high) {
    throw core::UsageError(std::string(kWatchCommand) + ": " + what + " '" + text +
                           "' is not a number from " + std::to_string(low) + " to " +
                           std::to_string(high));
  }
  return value;
}

}  // namespace

int watch_group_main(const std::vector<std::string>& args) {
  if (args.size() != 3) {
    throw core::UsageError(std::string(kWatchCommand) +
                           " ADDRESS PORT SIZE (started by the engine's launcher)");
  }
  const int port = whole_number(args[1], "PORT", 1, 65535);
  std::vector<std::string> hosts(static_cast<size_t>(whole_number(args[2], "SIZE", 1, 1 << 20)));
  std::signal(SIGPIPE, SIG_IGN);
  c10::intrusive_ptr<c10d::Store> store;
  for (;;) {
    std::string line;
    try {
      if (!store) store = connect_watch(args[0], port);
      line = read_ranks(*store, hosts);
    } catch (const std::exception& e) {
      store.reset();
      line = "error " + core::describe_exception(e);
      for (char& c : line) {
        if (c == '\n') c = ' ';
      }
    }
    if (std::printf("%s\n", line.c_str()) < 0 || std::fflush(stdout) != 0) return 0;  // no reader
    std::this_thread::sleep_for(Heartbeat::kInterval);
  }
}

GroupWatch::GroupWatch(const World& world)
    : world_(world), ranks_(static_cast<size_t>(world.size)) {
  start_watcher();
}

GroupWatch::~GroupWatch() = default;

void GroupWatch::start_watcher() {
  core::ChildSpec spec;
  spec.argv = {core::executable_path(), kWatchCommand, world_.master_addr,
               std::to_string(world_.master_port), std::to_string(world_.size)};
  spec.what = "the launcher's watch of the group";
  spec.output = core::ChildOutput::kPipe;
  watcher_ = std::make_unique<core::ChildProcess>(spec);
  partial_.clear();
}

void GroupWatch::take_line(const std::string& line) {
  const auto now = Clock::now();
  if (line.rfind("error ", 0) == 0) {
    // a read that timed out is the store answering nothing, not an error to quote
    const bool timed_out =
        line.find("Timeout") != std::string::npos || line.find("timed out") != std::string::npos;
    error_ = timed_out ? "" : line.substr(6);
    // A store that took the connection and then answered nothing is there and silent (rank 0
    // stopped before the watcher's first reading): its silence counts from that reading's start.
    // One that refused the connection may not be serving yet, and counts for nothing.
    if (timed_out && !answered_ && line.find("trying to connect") == std::string::npos) {
      answered_ = true;
      last_answer_ = now - kConnectTimeout;
    }
    return;
  }
  if (line.rfind("ok", 0) != 0) return;  // anything else the process printed
  std::vector<Rank> read;
  size_t at = 2;
  while (at < line.size() && line[at] == '\t') {
    const size_t end = std::min(line.find('\t', at + 1), line.size());
    const std::string field = line.substr(at + 1, end - at - 1);
    Rank rank;
    char done = '0';
    int consumed = 0;
    long long count = 0;
    if (std::sscanf(field.c_str(), "%lld %c %n", &count, &done, &consumed) < 2) return;
    rank.count = count;
    rank.done = done == '1';
    rank.host = field.substr(static_cast<size_t>(consumed));
    read.push_back(rank);
    at = end;
  }
  if (read.size() != ranks_.size()) return;
  answered_ = true;
  last_answer_ = now;
  error_.clear();
  for (size_t r = 0; r < read.size(); ++r) {
    if (read[r].count != ranks_[r].count) ranks_[r].changed = now;
    ranks_[r].count = read[r].count;
    ranks_[r].done = read[r].done;
    ranks_[r].host = read[r].host;
  }
}

std::optional<Silence> GroupWatch::silence() {
  const auto now = Clock::now();
  if (watcher_) {
    const bool open = watcher_->read_output([&](const std::string& chunk) { partial_ += chunk; });
    for (size_t end; (end = partial_.find('\n')) != std::string::npos;) {
      take_line(partial_.substr(0, end));
      partial_.erase(0, end + 1);
    }
    if (!open || watcher_->poll()) {  // ended (its store connection reset): another, soon
      watcher_.reset();
      watcher_ended_ = now;
    }
  } else if (now - watcher_ended_ >= Heartbeat::kInterval) {
    start_watcher();
  }
  if (!answered_) return std::nullopt;
  const auto whole_seconds = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::seconds>(d);
  };
  if (now - last_answer_ >= world_.timeout) {
    Silence silence;
    silence.store = true;
    silence.host = ranks_.front().host;
    silence.error = error_;
    silence.silent_for = whole_seconds(now - last_answer_);
    return silence;
  }
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const auto& rank = ranks_[r];
    if (rank.count == 0 || rank.done || now - rank.changed < world_.timeout) continue;
    Silence silence;
    silence.rank = static_cast<int>(r);
    silence.host = rank.host;
    silence.silent_for = whole_seconds(now - rank.changed);
    return silence;
  }
  return std::nullopt;
}

}  // namespace engine::distributed
