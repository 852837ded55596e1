// What each machine's launcher sees of the whole group: every rank's heartbeat counter in the
// rendezvous store (Heartbeat), read every second. A rank whose counter stands still for the
// timeout (stopped, deadlocked, its machine cut off) or a store that answers nothing for the
// timeout (rank 0 stopped, or the network to it down) is a silence: the launcher ends its own
// ranks and says which rank went silent and where, so that a hang anywhere ends every
// machine's launcher, not only the one whose rank failed.
//
// The store is read by a process of its own (`engine __watch_group`), not a thread of the
// launcher: libtorch 1.13's TCPStore client runs a thread that ends the whole process
// (std::terminate) when the store's server resets its connection, which a rank 0 killed while
// stopped does. The launcher reads the watcher's lines and starts another when one ends.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/distributed/world.hpp"

namespace engine::core {
class ChildProcess;
}

namespace engine::distributed {

struct Silence {
  int rank = 0;        // the silent rank; 0 when its store is what went silent
  bool store = false;  // rank 0's store, not only one counter
  std::string host;    // "m2, 192.168.5.2", as the rank published it; "" when unknown
  std::string error;   // the store's last error, when it failed rather than kept quiet
  std::chrono::seconds silent_for{0};
};

class GroupWatch {
 public:
  // Watches the world at world.master_addr:master_port of world.size ranks, with
  // world.timeout as the stillness that counts. Nothing is counted before the store first
  // answers, nor a rank before its heartbeat starts or after it said it is done.
  explicit GroupWatch(const World& world);
  ~GroupWatch();
  GroupWatch(const GroupWatch&) = delete;
  GroupWatch& operator=(const GroupWatch&) = delete;

  // Takes in what the watcher read since the last call; the first silence seen now, if any.
  std::optional<Silence> silence();

 private:
  using Clock = std::chrono::steady_clock;
  struct Rank {
    int64_t count = 0;
    Clock::time_point changed;
    bool done = false;
    std::string host;
  };
  void start_watcher();
  void take_line(const std::string& line);

  World world_;
  std::vector<Rank> ranks_;
  std::unique_ptr<core::ChildProcess> watcher_;
  Clock::time_point watcher_ended_;
  std::string partial_;
  bool answered_ = false;  // the store answered once: from then on its silence counts
  Clock::time_point last_answer_;
  std::string error_;
};

// `engine __watch_group ADDRESS PORT SIZE`: connects to the store and prints one line a second,
// "ok" and a tab-separated "COUNT DONE HOST" per rank, or "error" and the cause. Runs until it
// is killed (it dies with its launcher).
int watch_group_main(const std::vector<std::string>& args);

}  // namespace engine::distributed
