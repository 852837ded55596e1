// One HTTP request as written, over a plain socket to 127.0.0.1: the tests of the live page
// send paths no client library would (unnormalised "..", odd Host headers, other methods).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "engine/report/front_door.hpp"

namespace engine::test {

struct RawAnswer {
  int status = 0;
  std::string head, body;
};

// A TCP connection to 127.0.0.1:port (the front door's) with a 60 s receive guard (against a
// hang, not a wait); -1 when it cannot be made.
inline int connect_loopback(int port) {
  const int fd = report::connect_loopback(port);
  const timeval guard{60, 0};
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof guard);
  return fd;
}

// Sends "METHOD TARGET HTTP/1.1" with the Host header given (default: the one the server
// answers) and reads the answer to its end (Connection: close).
inline RawAnswer raw_http(int port, const std::string& method, const std::string& target,
                          std::string host = "") {
  if (host.empty()) host = "127.0.0.1:" + std::to_string(port);
  RawAnswer answer;
  const int fd = connect_loopback(port);
  if (fd < 0) return answer;
  const std::string request = method + " " + target + " HTTP/1.1\r\nHost: " + host +
                              "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    ::close(fd);
    return answer;
  }
  std::string text;
  char buffer[8192];
  for (ssize_t got; (got = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) text.append(buffer, got);
  ::close(fd);
  const size_t end = text.find("\r\n\r\n");
  answer.head = text.substr(0, end);
  answer.body = end == std::string::npos ? "" : text.substr(end + 4);
  if (text.rfind("HTTP/1.1 ", 0) == 0) answer.status = std::stoi(text.substr(9, 3));
  return answer;
}

}  // namespace engine::test
