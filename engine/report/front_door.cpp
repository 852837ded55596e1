#include "engine/report/front_door.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <thread>

namespace engine::report {
namespace {

// false when the peer is gone or took nothing within its send timeout
bool send_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return true;
}

void answer(int fd, const char* status) {
  const std::string text =
      std::string("HTTP/1.1 ") + status + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  send_all(fd, text.data(), text.size());
}

// The head with "Connection: close" in place of any Connection header the client sent: the
// server then closes after its answer, which ends the relay. (A half-closed connection will not
// do: httplib answers nothing to a request whose client has shut its side.)
std::string closing(const std::string& head) {
  const size_t end = head.find("\r\n\r\n");
  std::string out, line;
  size_t at = 0;
  while (at < end) {
    const size_t next = head.find("\r\n", at);
    line = head.substr(at, (next < end ? next : end) - at);
    at = next < end ? next + 2 : end;
    std::string name = line.substr(0, line.find(':'));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name != "connection") out += line + "\r\n";
  }
  return out + "Connection: close\r\n\r\n" + head.substr(end + 4);
}

}  // namespace

int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

FrontDoor::FrontDoor(const std::string& host, int port, std::chrono::milliseconds head_deadline)
    : head_deadline_(head_deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string name =
      host.size() > 2 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
  if (::getaddrinfo(name.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
  for (addrinfo* a = found; a && listener_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      listener_ = fd;
    } else {
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listener_ < 0) return;
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (::pipe2(wake_, O_CLOEXEC) != 0) {
    ::close(listener_);
    listener_ = -1;
  }
}

FrontDoor::~FrontDoor() {
  stop();
  for (int fd : {listener_, wake_[0], wake_[1]}) {
    if (fd >= 0) ::close(fd);
  }
}

void FrontDoor::run(int inner_port) {
  while (true) {
    pollfd waits[2] = {{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(waits, 2, -1) < 0 && errno != EINTR) break;
    if (waits[1].revents) break;
    if (!(waits[0].revents & POLLIN)) continue;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || static_cast<int>(open_.size()) >= kMostConnections) {
      answer(client, "503 Service Unavailable");
      ::close(client);
      continue;
    }
    open_.insert(client);
    std::thread([this, client, inner_port] { serve(client, inner_port); }).detach();
  }
  // the connections still open end now: shut, each thread closes its own and says so
  std::unique_lock<std::mutex> lock(mutex_);
  stopping_ = true;
  for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
  ended_.wait(lock, [this] { return open_.empty(); });
}

void FrontDoor::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || wake_[1] < 0) return;
    stopping_ = true;
    for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
  }
  const char byte = 1;
  if (::write(wake_[1], &byte, 1) < 0) {
    // the pipe is ours and empty: a write cannot fail here but for a closed process
  }
}

bool FrontDoor::stopping_now() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_;
}

void FrontDoor::serve(int client, int inner_port) {
  // the head: up to the empty line, within the deadline and the size
  std::string head;
  const auto deadline = std::chrono::steady_clock::now() + head_deadline_;
  const char* refusal = nullptr;
  char buffer[8192];
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (head.size() > kMostHeadBytes) {
      refusal = "431 Request Header Fields Too Large";
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd wait{client, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&wait, 1, static_cast<int>(left.count())) == 0) {
      refusal = "408 Request Timeout";
      break;
    }
    const ssize_t got = ::recv(client, buffer, sizeof buffer, 0);
    if (got <= 0) break;  // gone
    head.append(buffer, static_cast<size_t>(got));
  }
  const size_t head_end = head.find("\r\n\r\n");
  if (!refusal && head_end != std::string::npos && head_end + 4 > kMostHeadBytes) {
    refusal = "431 Request Header Fields Too Large";  // the last read made it whole, and too large
  }
  if (refusal) {
    answer(client, refusal);
    // a lingering close: what the client is still sending is read and dropped for a moment, so
    // that closing with unread bytes (a reset) does not take the answer away from it
    ::shutdown(client, SHUT_WR);
    size_t drained = 0;
    for (pollfd wait{client, POLLIN, 0};
         drained < (1u << 20) && ::poll(&wait, 1, 500) > 0 && !stopping_now();) {
      const ssize_t got = ::recv(client, buffer, sizeof buffer, 0);
      if (got <= 0) break;
      drained += static_cast<size_t>(got);
    }
  }
  const bool whole = head_end != std::string::npos && !refusal;
  const int inner = whole ? connect_loopback(inner_port) : -1;
  if (inner >= 0) {
    // one request on a connection of its own: the server answers it and closes
    const std::string request = closing(head);
    send_all(inner, request.data(), request.size());
    const timeval guard{30, 0};  // a client that does not read its answer is let go
    ::setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &guard, sizeof guard);
    for (ssize_t got; (got = ::recv(inner, buffer, sizeof buffer, 0)) > 0;) {
      if (!send_all(client, buffer, static_cast<size_t>(got))) break;  // once, not per chunk
    }
    ::close(inner);
  } else if (whole) {
    answer(client, "502 Bad Gateway");
  }
  ::shutdown(client, SHUT_RDWR);
  {
    // forgotten before it is closed, so that run() never shuts a number accept() gave again
    std::lock_guard<std::mutex> lock(mutex_);
    open_.erase(client);
    ended_.notify_all();
  }
  ::close(client);  // nothing of this object is touched from here: run() may have returned
}

}  // namespace engine::report
