#include "engine/distributed/heartbeat.hpp"

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace engine::distributed {
namespace {

// Long enough that a rank beating every interval is seen to move even when one beat is late.
constexpr int kWatchedIntervals = 3;

}  // namespace

Heartbeat::Heartbeat(const World& world, c10::intrusive_ptr<c10d::Store> store)
    : world_(world), store_(std::move(store)) {
  store_->add(key(world_.rank), 1);  // present before anyone can watch it
  thread_ = std::thread([this] { beat(); });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::string Heartbeat::key(int rank) {
  return "engine/heartbeat/" + std::to_string(rank);
}

void Heartbeat::beat() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kInterval, [this] { return stopping_; })) {
    try {
      store_->add(key(world_.rank), 1);
    } catch (const std::exception&) {
      return;  // the store is gone with rank 0: nobody is left to watch
    }
  }
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
