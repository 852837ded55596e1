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
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // Watches every other rank's counter for a few intervals, through `store` (not the beating
  // connection); returns the ranks whose counter did not move. Throws when the store cannot
  // be reached (rank 0, which serves it, is gone).
  std::vector<int> silent_ranks(c10d::Store& store) const;

  static std::string key(int rank);

 private:
  void beat();

  World world_;
  c10::intrusive_ptr<c10d::Store> store_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace engine::distributed
