// Each rank's sign of life in the rendezvous store: a counter it bumps every second from a
// thread of its own, over a connection of its own, beside its host ("m2 192.168.5.2") and, when
// it stops beating on purpose (the rank ends, normally or on an error), a mark that it is done.
// When a collective fails, the survivors look at whose counter stopped and name those ranks, so
// a message names the dead rank under any scheduler (torchrun, Slurm, Kubernetes); each
// machine's launcher watches the counters too (GroupWatch) and ends its ranks when one stops.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/distributed/world.hpp"

namespace c10d {
class Store;
}

namespace engine::distributed {

class Heartbeat {
 public:
  static constexpr auto kInterval = std::chrono::milliseconds(1000);

  // Starts beating through `store` (a connection used by nothing else).
  Heartbeat(const World& world, c10::intrusive_ptr<c10d::Store> store);
  // Stops the beating. A beat stuck on a connection that no longer answers (the network to
  // rank 0's store gone: TCP gives up only after many minutes) is left behind after two
  // intervals, holding its own state, so that a failing rank still ends in time.
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // What watching the other ranks' counters for a few intervals found.
  struct Watched {
    enum class Store { kAnswered, kFailed, kSilent };
    Store store = Store::kAnswered;  // kFailed: an error (gone); kSilent: no answer in time
    std::vector<int> silent;         // ranks whose counter did not move (when answered)
  };
  // Watches through `store` (not the beating connection), from a thread of its own: a store
  // that does not answer (rank 0 stopped, or the network to it down) is given up on after the
  // watch plus a short grace instead of blocking for the store's whole timeout. Takes about
  // kWatchSeconds.
  Watched watch_others(c10::intrusive_ptr<c10d::Store> store) const;
  static constexpr int kWatchSeconds = 5;

  static std::string key(int rank);
  static std::string host_key(int rank);
  static std::string done_key(int rank);

 private:
  // What the beating thread uses: shared with it, so that it may outlive this object.
  struct Beating {
    c10::intrusive_ptr<c10d::Store> store;
    std::string key;
    std::string done_key;
    std::mutex mutex;
    std::condition_variable wake;
    bool stopping = false;
    bool stopped = false;
  };
  static void beat(const std::shared_ptr<Beating>& beating);

  World world_;
  std::shared_ptr<Beating> beating_;
  std::thread thread_;
};

}  // namespace engine::distributed
