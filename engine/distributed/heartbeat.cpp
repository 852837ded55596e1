#include "engine/distributed/heartbeat.hpp"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "engine/distributed/locality.hpp"

namespace engine::distributed {
namespace {

// Long enough that a rank beating every interval is seen to move even when one beat is late.
constexpr int kWatchedIntervals = 3;

// The counters of every rank but `rank`, read once.
std::vector<int64_t> counters(c10d::Store& store, int rank, int size) {
  std::vector<int64_t> values(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    if (r != rank) values[static_cast<size_t>(r)] = store.add(Heartbeat::key(r), 0);
  }
  return values;
}

// What the watching thread leaves for the caller, which may have stopped waiting for it.
struct WatchResult {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  Heartbeat::Watched watched;
};

}  // namespace

Heartbeat::Heartbeat(const World& world, c10::intrusive_ptr<c10d::Store> store)
    : world_(world), beating_(std::make_shared<Beating>()) {
  beating_->store = std::move(store);
  beating_->key = key(world_.rank);
  beating_->done_key = done_key(world_.rank);
  const std::string host = host_identity(world_);
  beating_->store->set(host_key(world_.rank), std::vector<uint8_t>(host.begin(), host.end()));
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

std::string Heartbeat::host_key(int rank) {
  return "engine/heartbeat_host/" + std::to_string(rank);
}

std::string Heartbeat::done_key(int rank) {
  return "engine/heartbeat_done/" + std::to_string(rank);
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
  if (beating->stopping) {
    lock.unlock();
    try {  // ended on purpose: the launchers' watch is not to take the stillness for a hang
      beating->store->set(beating->done_key, std::vector<uint8_t>{'1'});
    } catch (const std::exception&) {
      // the store is gone: every rank is ending
    }
    lock.lock();
  }
  beating->stopped = true;
  beating->wake.notify_all();
}

Heartbeat::Watched Heartbeat::watch_others(c10::intrusive_ptr<c10d::Store> store) const {
  auto result = std::make_shared<WatchResult>();
  std::thread([result, store, rank = world_.rank, size = world_.size] {
    Watched watched;
    try {
      const auto before = counters(*store, rank, size);
      std::this_thread::sleep_for(kInterval * kWatchedIntervals);
      const auto after = counters(*store, rank, size);
      for (int r = 0; r < size; ++r) {
        if (r != rank && after[static_cast<size_t>(r)] == before[static_cast<size_t>(r)]) {
          watched.silent.push_back(r);
        }
      }
    } catch (const std::exception&) {
      watched.store = Watched::Store::kFailed;
    }
    std::lock_guard<std::mutex> lock(result->mutex);
    result->watched = std::move(watched);
    result->finished = true;
    result->done.notify_all();
  }).detach();  // a store that never answers holds it; it owns what it touches
  std::unique_lock<std::mutex> lock(result->mutex);
  if (!result->done.wait_for(lock, std::chrono::seconds(kWatchSeconds),
                             [&] { return result->finished; })) {
    Watched silent;
    silent.store = Watched::Store::kSilent;
    return silent;
  }
  return result->watched;
}

}  // namespace engine::distributed
