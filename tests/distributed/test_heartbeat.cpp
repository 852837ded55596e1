// The heartbeat's look at the other ranks when a collective failed: a store that answers
// nothing (a stopped rank 0, the network to it cut) is given up on after the watch and a short
// grace, not after the store's own timeout, so that a survivor ends within --dist_timeout plus
// seconds rather than twice the timeout.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>

#include "engine/distributed/heartbeat.hpp"
#include "engine/distributed/launcher.hpp"

using namespace engine;

namespace {

c10::intrusive_ptr<c10d::Store> client(int port) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(port);
  options.isServer = false;
  options.waitWorkers = false;
  options.timeout = std::chrono::seconds(60);
  return c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
}

// A port whose connections the kernel accepts and nobody ever answers, as a stopped process's
// listening socket does. Left open to the end of the process: closing it would reset the
// connections, and libtorch 1.13's store client ends the process on a reset (GroupWatch).
int silent_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(listen(fd, 16) == 0);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  return ntohs(address.sin_port);
}

}  // namespace

TEST_CASE("a store that answers nothing is given up on within the watch's seconds") {
  const int port = distributed::free_port();
  c10d::TCPStoreOptions serving;
  serving.port = static_cast<uint16_t>(port);
  serving.isServer = true;
  serving.waitWorkers = false;
  const auto server = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", serving);
  distributed::World world;
  world.rank = 1;
  world.size = 2;
  world.master_port = port;
  distributed::Heartbeat heartbeat(world, client(port));

  SUBCASE("an answering store: rank 0, which never beat, is silent") {
    const auto watched = heartbeat.watch_others(client(port));
    CHECK(watched.store == distributed::Heartbeat::Watched::Store::kAnswered);
    CHECK(watched.silent == std::vector<int>{0});
  }
  SUBCASE("a store that answers nothing: kSilent, long before the store's 60 s") {
    const auto start = std::chrono::steady_clock::now();
    const auto watched = heartbeat.watch_others(client(silent_port()));
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(watched.store == distributed::Heartbeat::Watched::Store::kSilent);
    CHECK(took < std::chrono::seconds(distributed::Heartbeat::kWatchSeconds + 2));
  }
}
