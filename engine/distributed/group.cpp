#include "engine/distributed/group.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <csignal>

// c10d's Gloo header includes Gloo's own, which Debian's libgloo-dev installs. PyTorch's Python
// wheels do not ship them; built against one of those without libgloo-dev, the engine has no
// Gloo process group (distributed training on CUDA only, through NCCL).
#if __has_include(<gloo/algorithm.h>)
#define ENGINE_WITH_GLOO 1
// guarded by the flag PyTorch's own build defines; Debian's libtorch is built with Gloo
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#endif

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#ifdef ENGINE_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <type_traits>

#include "engine/core/device_memory.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/log.hpp"
#include "engine/distributed/distributed_error.hpp"
#include "engine/distributed/locality.hpp"

namespace engine::distributed {
namespace {

constexpr size_t kBroadcastBucketBytes = 64 << 20;  // coalesced broadcasts, as DDP's start-up
constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr auto kShortestStoreTimeout = std::chrono::milliseconds(2000);

std::string seconds_text(std::chrono::milliseconds timeout) {
  return std::to_string(timeout.count() / 1000) + " s";
}

bool loopback(const std::string& address) {
  return address == "localhost" || address.rfind("127.", 0) == 0 || address == "::1";
}

// Gloo's transport for this machine: GLOO_SOCKET_IFNAME's interface when set (as PyTorch
// reads it), loopback for a world on one machine, else the address this machine reaches
// MASTER_ADDR from (the one the other machines can reach it at, whatever its name resolves to).
#ifdef ENGINE_WITH_GLOO
std::shared_ptr<::gloo::transport::Device> gloo_device(const World& world) {
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  }
  if (loopback(world.master_addr) || world.local_size == world.size) {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  const std::string address = address_towards(world.master_addr, world.master_port);
  if (!address.empty()) return c10d::ProcessGroupGloo::createDeviceForHostname(address);
  return c10d::ProcessGroupGloo::createDefaultDevice();
}
#endif

// In libtorch 1.13 Gloo's and NCCL's process groups are c10d::ProcessGroup themselves; from 2.0
// they are backends (c10d::Backend) that a ProcessGroup dispatches to, one per device type.
template <typename Group = c10d::ProcessGroup, typename Backend>
c10::intrusive_ptr<Group> process_group(c10::intrusive_ptr<Backend> backend,
                                        const c10::intrusive_ptr<c10d::Store>& store,
                                        const World& world, c10::DeviceType device) {
  if constexpr (std::is_base_of_v<Group, Backend>) {
    (void)store, (void)world, (void)device;
    return backend;
  } else {
    const auto type =
        device == c10::DeviceType::CUDA ? Group::BackendType::NCCL : Group::BackendType::GLOO;
    auto group = c10::make_intrusive<Group>(store, world.rank, world.size);
    group->setBackend(device, type, backend);
    group->setDefaultBackend(type);
    return group;
  }
}

// Why `host` does not resolve to an address ("Name or service not known"); "" when it does.
std::string resolution_error(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int code = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found) freeaddrinfo(found);
  return code == 0 ? "" : gai_strerror(code);
}

// A MASTER_ADDR that does not resolve is said as such, not as a port another job holds or a
// store that cannot be reached. In a cluster a name may resolve only once its pod or node runs
// (a Kubernetes service, a job's first node), so it is tried again until the timeout.
void wait_until_resolvable(const World& world) {
  const auto deadline = std::chrono::steady_clock::now() + world.timeout;
  for (bool said = false;; said = true) {
    const std::string cause = resolution_error(world.master_addr);
    if (cause.empty()) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      throw DistributedError("rank " + std::to_string(world.rank) + ": MASTER_ADDR '" +
                             world.master_addr + "' does not resolve to an address (" + cause +
                             ") within " + seconds_text(world.timeout) +
                             ": check MASTER_ADDR / --master_addr, a host name or address that "
                             "every machine of the job resolves to rank 0's machine");
    }
    if (!said) {
      core::log::warn("rank {}: MASTER_ADDR '{}' does not resolve ({}); trying again for up to {}",
                      world.rank, world.master_addr, cause, seconds_text(world.timeout));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

Group::Group(World world, torch::Device device) : world_(std::move(world)), device_(device) {
  // A write to the socket of a rank that died must be an error (EPIPE) that the group reports
  // as that rank gone, not SIGPIPE killing this rank first (which then read as the one that
  // failed). Python, and so PyTorch's ranks, ignore SIGPIPE from the start.
  std::signal(SIGPIPE, SIG_IGN);
  wait_until_resolvable(world_);
  store_ = open_store(world_.rank == 0);
  join();
  try {
    if (!world_.locality_known()) find_locality();
    // cuda without an index: this machine's GPU LOCAL_RANK, current before any CUDA work
    device_ = rank_device(device_, world_);
    core::make_current_device(device_);
    heartbeat_ = std::make_unique<Heartbeat>(world_, open_store(false));
#ifdef USE_C10D_NCCL
    if (device_.is_cuda()) {
      // As DDP runs NCCL: wait() makes the current stream wait for the collective, never the
      // host (blocking-wait mode made every buffer broadcast before a forward wait for the
      // whole GPU queue). A collective past --dist_timeout is found by NCCL's watchdog, which
      // aborts the communicators without ending the process (CleanUpOnly, 2); the next
      // collective or wait() then throws, which ends the run with exit 8 naming the ranks the
      // heartbeat lost. A user's own settings are kept.
      setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2", 0);
      setenv("NCCL_ASYNC_ERROR_HANDLING", "2", 0);  // the name before PyTorch 2.2
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = world_.timeout;
      backend_ = process_group(c10::make_intrusive<c10d::ProcessGroupNCCL>(
                                   c10::make_intrusive<c10d::PrefixStore>("nccl", store_),
                                   world_.rank, world_.size, options),
                               store_, world_, c10::DeviceType::CUDA);
      return;
    }
#endif
    if (!device_.is_cpu()) {
      throw core::UsageError("distributed training on " + device_.str() +
                             " needs a libtorch built with NCCL (see docs/distributed.md); "
                             "this one offers Gloo, for --device cpu");
    }
#ifdef ENGINE_WITH_GLOO
    auto options = c10d::ProcessGroupGloo::Options::create(world_.timeout);
    options->devices.push_back(gloo_device(world_));
    backend_ = process_group(c10::make_intrusive<c10d::ProcessGroupGloo>(
                                 c10::make_intrusive<c10d::PrefixStore>("gloo", store_),
                                 world_.rank, world_.size, options),
                             store_, world_, c10::DeviceType::CPU);
#else
    throw core::UsageError(
        "distributed training on the CPU needs Gloo's headers at build time (Debian's "
        "libgloo-dev); this engine was built without them (see docs/gpu.md)");
#endif
  } catch (const core::Error&) {
    throw;
  } catch (const std::exception& e) {
    fail("connecting the process group", e);
  }
}

Group::~Group() = default;

c10::intrusive_ptr<c10d::Store> Group::open_store(bool serve) const {
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(world_.master_port);
  options.isServer = serve;
  options.waitWorkers = false;  // join() checks who came, with messages of its own
  // c10d's sockets count their connect timeout in whole seconds: under one, even rank 0's own
  // client gives up at once
  options.timeout = std::max<std::chrono::milliseconds>(world_.timeout, kShortestStoreTimeout);
  const std::string where = world_.master_addr + ":" + std::to_string(world_.master_port);
  try {
    return c10::make_intrusive<c10d::TCPStore>(world_.master_addr, options);
  } catch (const std::exception& e) {
    const std::string cause = core::describe_exception(e);
    if (serve) {
      throw DistributedError(
          "rank 0 cannot serve the rendezvous store on port " + std::to_string(world_.master_port) +
          " (MASTER_ADDR " + world_.master_addr + "): " + cause +
          "; another job may hold the port: choose another with MASTER_PORT or --master_port");
    }
    throw DistributedError("rank " + std::to_string(world_.rank) +
                           " cannot reach rank 0's rendezvous store at " + where + " within " +
                           seconds_text(world_.timeout) + ": " + cause +
                           "; check MASTER_ADDR / --master_addr and that rank 0 is running");
  }
}

// Every rank writes the world size it was started with; rank 0 waits for all of them and each
// compares with rank 0's, so a process started with another WORLD_SIZE, or a rank that never
// comes, is named instead of leaving the others waiting in the process group's connection.
void Group::join() {
  const std::string mine = std::to_string(world_.size);
  const auto key = [](int rank) { return "engine/world_size/" + std::to_string(rank); };
  try {
    const std::vector<uint8_t> mine_bytes(mine.begin(), mine.end());
    if (world_.rank != 0) {
      // Read rank 0's size before writing ours: rank 0 stops as soon as it sees a size unlike
      // its own, and its store goes with it, so a read after our write could find it gone.
      const auto theirs = store_->get(key(0));
      const std::string leader(theirs.begin(), theirs.end());
      if (leader == mine) {
        store_->set(key(world_.rank), mine_bytes);
        return;
      }
      try {
        store_->set(key(world_.rank), mine_bytes);  // so that rank 0 stops at once too
      } catch (const std::exception&) {
        // rank 0 may already be gone; the mismatch below is what this rank reports
      }
      throw DistributedError("rank " + std::to_string(world_.rank) +
                             " was started with a world of " + mine + " processes, rank 0 with " +
                             leader +
                             ": every process needs the same WORLD_SIZE (--nproc x --nnodes)");
    }
    store_->set(key(0), mine_bytes);
    const auto deadline = std::chrono::steady_clock::now() + world_.timeout;
    std::vector<int> missing;
    for (;;) {
      missing.clear();
      for (int r = 1; r < world_.size; ++r) {
        if (!store_->check({key(r)})) {
          missing.push_back(r);
          continue;
        }
        const auto theirs = store_->get(key(r));
        const std::string size(theirs.begin(), theirs.end());
        if (size != mine) {
          throw DistributedError("rank " + std::to_string(r) + " was started with a world of " +
                                 size + " processes, rank 0 with " + mine +
                                 ": every process needs the same WORLD_SIZE (--nproc x --nnodes)");
        }
      }
      if (missing.empty()) return;
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(kPollInterval);
    }
    std::string names;
    for (int r : missing) names += (names.empty() ? "" : ", ") + std::to_string(r);
    throw DistributedError("rank(s) " + names + " of " + mine + " did not join within " +
                           seconds_text(world_.timeout) + " (rendezvous " + world_.master_addr +
                           ":" + std::to_string(world_.master_port) +
                           "); were they started, with this MASTER_ADDR and MASTER_PORT?");
  } catch (const core::Error&) {
    throw;
  } catch (const std::exception& e) {
    fail("joining the rendezvous", e);
  }
}

// Every rank's host identity through the store; this rank's local rank and local size where
// the scheduler did not give them.
void Group::find_locality() {
  const auto key = [](int rank) { return "engine/host/" + std::to_string(rank); };
  const std::string mine = host_identity(world_);
  store_->set(key(world_.rank), std::vector<uint8_t>(mine.begin(), mine.end()));
  std::vector<std::string> hosts;
  for (int r = 0; r < world_.size; ++r) {
    const auto bytes =
        r == world_.rank ? std::vector<uint8_t>(mine.begin(), mine.end()) : store_->get(key(r));
    hosts.emplace_back(bytes.begin(), bytes.end());
  }
  const Locality found = locality_from_hosts(hosts, world_.rank);
  if (!world_.local_rank_known) world_.local_rank = found.local_rank;
  if (!world_.local_size_known) world_.local_size = found.local_size;
  world_.local_rank_known = world_.local_size_known = true;
  core::log::debug("rank {}: local {} of {}, found from the ranks' hosts ({})", world_.rank,
                   world_.local_rank, world_.local_size, mine);
}

void Group::fail(const std::string& operation, const std::exception& cause) const {
  throw DistributedError("rank " + std::to_string(world_.rank) + " of " +
                         std::to_string(world_.size) + ": " + operation +
                         " failed: " + core::describe_exception(cause) + "; " + who_is_gone());
}

// The ranks whose heartbeat stopped, or rank 0 when its store no longer answers.
std::string Group::who_is_gone() const {
  const std::string gone =
      "died, was killed or stopped, ended on an error of its own (which its output shows), or "
      "the network between it and this machine is down";
  if (!heartbeat_) return "another rank " + gone;
  const Heartbeat::Watched watched = heartbeat_->watch_others(store_);
  if (watched.store != Heartbeat::Watched::Store::kAnswered) {
    if (world_.rank == 0) {  // its own store: this machine's network is what went
      return "this rank cannot reach its own rendezvous store at " + world_.master_addr +
             ": this machine's network address or interface went away";
    }
    const std::string where = world_.master_addr + ":" + std::to_string(world_.master_port);
    if (watched.store == Heartbeat::Watched::Store::kSilent) {
      return "rank 0, which serves the rendezvous store at " + where + ", did not answer within " +
             std::to_string(Heartbeat::kWatchSeconds) +
             " s: it is stopped or stuck, or the network between it and this machine is down";
    }
    return "rank 0, which serves the rendezvous store at " + where + ", cannot be reached: it " +
           gone;
  }
  if (watched.silent.empty()) {
    return "every rank is still running, so one of them did not come to this operation within " +
           seconds_text(world_.timeout) +
           " (--dist_timeout): do all ranks run the same steps and collectives?";
  }
  std::string names;
  for (int r : watched.silent) names += (names.empty() ? "" : ", ") + std::to_string(r);
  return (watched.silent.size() == 1 ? "rank " : "ranks ") + names +
         " stopped answering: " + (watched.silent.size() == 1 ? "it " : "each ") + gone;
}

template <typename Fn>
void Group::guarded(const std::string& operation, Fn&& fn) {
  try {
    fn();
  } catch (const core::Error&) {
    throw;
  } catch (const std::exception& e) {
    fail(operation, e);
  }
}

void Group::broadcast(const std::vector<torch::Tensor>& tensors) {
  if (tensors.empty()) return;
  guarded("broadcasting from rank 0",
          [&] { c10d::broadcast_coalesced(backend_, tensors, kBroadcastBucketBytes, 0); });
}

void Group::all_reduce(torch::Tensor& tensor, bool maximum) {
  guarded("all-reduce", [&] {
    // NCCL carries only tensors of the group's device: a host tensor (the metrics' class
    // counts) travels through it and comes back
    const bool carried = tensor.device() != device_;
    std::vector<torch::Tensor> tensors{carried ? tensor.to(device_) : tensor};
    c10d::AllreduceOptions options;
    options.reduceOp = maximum ? c10d::ReduceOp::MAX : c10d::ReduceOp::SUM;
    backend_->allreduce(tensors, options)->wait();
    if (carried) tensor.copy_(tensors.front());
  });
}

namespace {

std::vector<double> reduced(Group& group, const std::vector<double>& values, bool maximum,
                            torch::Device device) {
  if (values.empty()) return values;
  auto tensor = torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64)).to(device);
  group.all_reduce(tensor, maximum);
  tensor = tensor.cpu();
  return {tensor.data_ptr<double>(), tensor.data_ptr<double>() + tensor.numel()};
}

}  // namespace

std::vector<double> Group::sum(const std::vector<double>& values) {
  return reduced(*this, values, false, device_);
}

std::vector<double> Group::max(const std::vector<double>& values) {
  return reduced(*this, values, true, device_);
}

void Group::barrier() {
  guarded("barrier", [&] {
    c10d::BarrierOptions options;
    // NCCL's barrier is an all-reduce on a device: this rank's, not one guessed from the rank
    if (device_.is_cuda() && device_.has_index()) options.device_ids = {device_.index()};
    backend_->barrier(options)->wait();
  });
}

std::string Group::share(const std::string& value_on_rank0) {
  const std::string key = "engine/share/" + std::to_string(shares_++);
  std::string value = value_on_rank0;
  guarded("sharing a value through the store", [&] {
    if (world_.rank == 0) {
      store_->set(key, std::vector<uint8_t>(value.begin(), value.end()));
    } else {
      const auto bytes = store_->get(key);
      value.assign(bytes.begin(), bytes.end());
    }
  });
  return value;
}

}  // namespace engine::distributed
