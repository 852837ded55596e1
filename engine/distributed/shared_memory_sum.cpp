#include "engine/distributed/shared_memory_sum.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ATen/core/grad_mode.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>

#include "engine/distributed/group.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace engine::distributed {

namespace {

// The start of the segment.
struct SegmentControl {
  std::atomic<uint32_t> arrived;     // ranks at the current wait
  std::atomic<uint32_t> generation;  // waits completed; the futex the waiting ranks sleep on
  std::atomic<int32_t> failed_rank;  // the first rank that gave up; -1 while all go on
};

// What each rank says of itself in the segment, after the control block.
struct RankEntry {
  std::atomic<int32_t> pid;
  std::atomic<uint64_t> pid_namespace;
  std::atomic<uint64_t> arrivals;  // waits this rank has come to
};

constexpr size_t kPage = 4096;
constexpr size_t kLine = 64;
// Busy-waits this many times before sleeping: a peer a few microseconds behind is met on its
// core without a system call; one further behind costs no more than this.
constexpr int kSpins = 2000;
constexpr auto kSleepSlice = std::chrono::milliseconds(50);  // then peers and time are checked

size_t round_up(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

size_t header_bytes(int size) {
  return round_up(round_up(sizeof(SegmentControl), kLine) + sizeof(RankEntry) * size, kPage);
}

RankEntry* entries(void* mapping) {
  return reinterpret_cast<RankEntry*>(static_cast<std::byte*>(mapping) +
                                      round_up(sizeof(SegmentControl), kLine));
}

SegmentControl& control_of(void* mapping) {
  return *static_cast<SegmentControl*>(mapping);
}

uint32_t* futex_word(std::atomic<uint32_t>& word) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  return reinterpret_cast<uint32_t*>(&word);
}

void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::milliseconds limit) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(limit.count() / 1000);
  ts.tv_nsec = static_cast<long>(limit.count() % 1000) * 1000000L;
  // shared between processes: not FUTEX_PRIVATE_FLAG
  syscall(SYS_futex, futex_word(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, futex_word(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

uint64_t own_pid_namespace() {
  struct stat st {};
  return stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

// Whether process `pid` still runs (a zombie has ended: its parent has not reaped it yet).
bool running(int32_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return true;
  const char state = line[close + 2];
  return state != 'Z' && state != 'X';
}

std::string segment_name() {
  std::random_device random;
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%08x%08x", random(), random());
  return "/engine-gradients-" + std::to_string(getpid()) + "-" + suffix;
}

// The segment, created and every page reserved (a tmpfs without the room says so now, rather
// than with SIGBUS at the first write); MAP_FAILED, and no segment left, when it cannot be.
void* create_segment(const std::string& name, size_t bytes) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return MAP_FAILED;
  void* mapping = MAP_FAILED;
  if (posix_fallocate(fd, 0, static_cast<off_t>(bytes)) == 0) {
    mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);
  if (mapping == MAP_FAILED) shm_unlink(name.c_str());
  return mapping;
}

void* attach_segment(const std::string& name, size_t bytes) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return MAP_FAILED;
  struct stat st {};
  void* mapping = MAP_FAILED;
  if (fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == bytes) {
    mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);
  return mapping;
}

}  // namespace

std::unique_ptr<SharedMemorySum> SharedMemorySum::open(Group& group, size_t bytes) {
  const World& world = group.world();
  if (!group.device().is_cpu() || world.size < 2 || world.local_size != world.size || bytes == 0) {
    return nullptr;
  }
  const size_t slot_bytes = round_up(bytes, kLine);
  const size_t total = header_bytes(world.size) + slot_bytes * static_cast<size_t>(world.size + 1);
  std::string name;
  void* mapping = MAP_FAILED;
  if (group.leader()) {
    name = segment_name();
    mapping = create_segment(name, total);
    if (mapping == MAP_FAILED) {
      name.clear();
    } else {
      auto* control = new (mapping) SegmentControl;
      control->arrived.store(0);
      control->generation.store(0);
      control->failed_rank.store(-1);
      for (int r = 0; r < world.size; ++r) new (entries(mapping) + r) RankEntry{};
    }
  }
  name = group.share(name);  // rank 0's segment is whole before anyone maps it
  if (name.empty()) return nullptr;
  if (!group.leader()) mapping = attach_segment(name, total);
  const bool mapped = mapping != MAP_FAILED;
  if (mapped) {
    auto& own = entries(mapping)[world.rank];
    own.pid.store(static_cast<int32_t>(getpid()));
    own.pid_namespace.store(own_pid_namespace());
  }
  // every rank has mapped it (or said it could not) once this returns: the name can go
  const bool everyone = group.max({mapped ? 0.0 : 1.0})[0] == 0;
  if (group.leader()) shm_unlink(name.c_str());
  if (!everyone) {
    if (mapped) munmap(mapping, total);
    return nullptr;
  }
  std::unique_ptr<SharedMemorySum> sum(
      new SharedMemorySum(world.rank, world.size, world.timeout, mapping, total, slot_bytes));
  const uint64_t own_namespace = entries(mapping)[world.rank].pid_namespace.load();
  for (int r = 0; r < world.size; ++r) {
    if (entries(mapping)[r].pid_namespace.load() != own_namespace) sum->peers_visible_ = false;
  }
  return sum;
}

SharedMemorySum::SharedMemorySum(int rank, int size, std::chrono::milliseconds timeout,
                                 void* mapping, size_t mapping_bytes, size_t slot_bytes)
    : rank_(rank),
      size_(size),
      timeout_(timeout),
      mapping_(mapping),
      mapping_bytes_(mapping_bytes),
      slot_bytes_(slot_bytes),
      data_(static_cast<std::byte*>(mapping) + header_bytes(size)) {}

SharedMemorySum::~SharedMemorySum() {
  munmap(mapping_, mapping_bytes_);
}

std::byte* SharedMemorySum::slot(int rank) const {
  return data_ + slot_bytes_ * static_cast<size_t>(rank);
}

bool SharedMemorySum::fits(const torch::Tensor& flat) const {
  return flat.device().is_cpu() && flat.is_contiguous() && flat.nbytes() <= slot_bytes_ &&
         (flat.scalar_type() == torch::kFloat32 || flat.scalar_type() == torch::kFloat64);
}

void SharedMemorySum::average(torch::Tensor& flat) {
  at::NoGradGuard no_grad;
  if (fits(flat)) flat.div_(size_);  // as the Reducer divides before Gloo's sum
  reduce(flat);
}

void SharedMemorySum::sum(torch::Tensor& flat) {
  reduce(flat);
}

void SharedMemorySum::reduce(torch::Tensor& flat) {
  const size_t bytes = flat.nbytes();
  if (!fits(flat)) {
    give_up("a tensor of " + std::to_string(bytes) + " bytes (" +
            std::string(c10::toString(flat.scalar_type())) +
            ") does not fit the shared segment's slots of " + std::to_string(slot_bytes_) +
            " bytes of float or double");
  }
  at::NoGradGuard no_grad;
  std::memcpy(slot(rank_), flat.data_ptr(), bytes);
  arrive("its gradients");
  const int64_t n = flat.numel();
  const int64_t share = (n + size_ - 1) / size_;
  const int64_t begin = std::min(n, share * rank_);
  const int64_t end = std::min(n, begin + share);
  if (begin < end) {
    const auto part = [&](std::byte* base) {
      return torch::from_blob(base, {n}, flat.options()).slice(0, begin, end);
    };
    auto out = part(result());
    out.copy_(part(slot(0)));
    for (int r = 1; r < size_; ++r) out.add_(part(slot(r)));
  }
  arrive("its share of the sum");
  std::memcpy(flat.data_ptr(), result(), bytes);
}

// Every rank's next wait: returns once all have come; throws when one gave up, ended, or the
// timeout passed.
void SharedMemorySum::arrive(const char* waiting_for) {
  SegmentControl& c = control_of(mapping_);
  stop_if_failed();
  const uint32_t generation = c.generation.load(std::memory_order_acquire);
  entries(mapping_)[rank_].arrivals.fetch_add(1, std::memory_order_relaxed);
  if (c.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint32_t>(size_)) {
    c.arrived.store(0, std::memory_order_relaxed);  // before the others can come again
    c.generation.fetch_add(1, std::memory_order_acq_rel);
    futex_wake_all(c.generation);
    return;
  }
  for (int i = 0; i < kSpins; ++i) {
    if (c.generation.load(std::memory_order_acquire) != generation) return;
    relax();
  }
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    futex_wait(c.generation, generation, kSleepSlice);
    if (c.generation.load(std::memory_order_acquire) != generation) return;
    stop_if_failed();
    check_peers(waiting_for);
    if (std::chrono::steady_clock::now() - start >= timeout_) {
      const uint64_t mine = entries(mapping_)[rank_].arrivals.load();
      std::string late;
      for (int r = 0; r < size_; ++r) {
        if (entries(mapping_)[r].arrivals.load() < mine) {
          late += (late.empty() ? "" : ", ") + std::to_string(r);
        }
      }
      give_up("rank " + std::to_string(rank_) + " waited " +
              std::to_string(timeout_.count() / 1000) + " s (--dist_timeout) for " + waiting_for +
              " from rank " + (late.empty() ? "?" : late) +
              " in the shared-memory gradient all-reduce");
    }
  }
}

void SharedMemorySum::stop_if_failed() const {
  const int32_t failed = control_of(mapping_).failed_rank.load(std::memory_order_acquire);
  if (failed >= 0) {
    throw std::runtime_error("rank " + std::to_string(failed) +
                             " stopped the shared-memory gradient all-reduce (it failed)");
  }
}

void SharedMemorySum::check_peers(const char* waiting_for) {
  if (!peers_visible_) return;  // other PID namespaces: only the timeout can tell
  const uint64_t mine = entries(mapping_)[rank_].arrivals.load();
  for (int r = 0; r < size_; ++r) {
    const auto& peer = entries(mapping_)[r];
    if (r == rank_ || peer.arrivals.load() >= mine) continue;
    const int32_t pid = peer.pid.load();
    if (!running(pid)) {
      give_up("rank " + std::to_string(r) + " (pid " + std::to_string(pid) +
              ", on this machine) ended before it sent " + waiting_for);
    }
  }
}

void SharedMemorySum::give_up(const std::string& why) {
  int32_t none = -1;
  control_of(mapping_).failed_rank.compare_exchange_strong(none, rank_);
  futex_wake_all(control_of(mapping_).generation);
  throw std::runtime_error(why);
}

}  // namespace engine::distributed
