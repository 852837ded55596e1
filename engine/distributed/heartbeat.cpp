#include "engine/distributed/heartbeat.hpp"

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace engine::distributed {
namespace {

// Long enough that a rank beating every interval is seen to move even when one beat is late.
constexpr int kWatchedIntervals = 3;

}  // namespace

Heartbeat::Heartbeat(const World& world, c10::intrusive_ptr<c10d::Store> store)
    : world_(world), beating_(std::make_shared<Beating>()) {
  beating_->store = std::move(store);
  beating_->key = key(world_.rank);
  beating_->store->add(beating_->key, 1);  // present before anyone can watch it
  thread_ = std::thread([beating = beating_] { beat(beating); });
}

Heartbeat::~Heartbeat() {
  std::unique_lock<std::mutex> lock(beating_->mutex);
  beating_->stopping = true;
  beating_->wake.notify_all();
  const bool stopped =
      beating_->wake.wait_for(lock, kInterval * 2, [this] { return beating_->stopped; });
  lock.unlock();
  if (stopped) {
    thread_.join();
  } else {
    thread_.detach();  // stuck in a store call that may never return; it owns `beating`
  }
}

std::string Heartbeat::key(int rank) {
  return "engine/heartbeat/" + std::to_string(rank);
}

void Heartbeat::beat(const std::shared_ptr<Beating>& beating) {
  std::unique_lock<std::mutex> lock(beating->mutex);
  while (!beating->wake.wait_for(lock, kInterval, [&] { return beating->stopping; })) {
    lock.unlock();  // the store call may block; the owner must still be able to give up
    bool reached = true;
    try {
      beating->store->add(beating->key, 1);
    } catch (const std::exception&) {
      reached = false;  // the store is gone with rank 0: nobody is left to watch
    }
    lock.lock();
    if (!reached) break;
  }
  beating->stopped = true;
  beating->wake.notify_all();
}

std::vector<int> Heartbeat::silent_ranks(c10d::Store& store) const {
  std::vector<int64_t> before(static_cast<size_t>(world_.size));
  for (int r = 0; r < world_.size; ++r) {
    if (r != world_.rank) before[static_cast<size_t>(r)] = store.add(key(r), 0);
  }
  std::this_thread::sleep_for(kInterval * kWatchedIntervals);
  std::vector<int> silent;
  for (int r = 0; r < world_.size; ++r) {
    if (r != world_.rank && store.add(key(r), 0) == before[static_cast<size_t>(r)]) {
      silent.push_back(r);
    }
  }
  return silent;
}

}  // namespace engine::distributed
