#include "engine/distributed/locality.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>

namespace engine::distributed {

std::string address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return {};
  std::string address;
  for (const addrinfo* a = found; a && address.empty(); a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    char text[INET6_ADDRSTRLEN] = {};
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0) {
      const void* bytes =
          local.ss_family == AF_INET6
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr);
      if (inet_ntop(local.ss_family, bytes, text, sizeof(text))) address = text;
    }
    close(fd);
  }
  freeaddrinfo(found);
  return address;
}

std::string host_identity(const World& world) {
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, sizeof(name) - 1);
  return std::string(name) + " " + address_towards(world.master_addr, world.master_port);
}

Locality locality_from_hosts(const std::vector<std::string>& hosts, int rank) {
  Locality locality;
  locality.local_size = 0;
  for (int r = 0; r < static_cast<int>(hosts.size()); ++r) {
    if (hosts[r] != hosts[rank]) continue;
    if (r < rank) ++locality.local_rank;
    ++locality.local_size;
  }
  return locality;
}

}  // namespace engine::distributed
