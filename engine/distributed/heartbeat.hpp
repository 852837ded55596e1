// Each rank's sign of life in the rendezvous store: a counter it bumps every second from a
// thread of its own, over a connection of its own. When a collective fails, the survivors
// look at whose counter stopped and name those ranks, so a message names the dead rank under
// any scheduler (torchrun, Slurm, Kubernetes), not only under the engine's own launcher.
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

  // Watches every other rank's counter for a few intervals, through `store` (not the beating
  // connection); returns the ranks whose counter did not move. Throws when the store cannot
  // be reached (rank 0, which serves it, is gone).
  std::vector<int> silent_ranks(c10d::Store& store) const;

  static std::string key(int rank);

 private:
  // What the beating thread uses: shared with it, so that it may outlive this object.
  struct Beating {
    c10::intrusive_ptr<c10d::Store> store;
    std::string key;
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
