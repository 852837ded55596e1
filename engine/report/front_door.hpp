// What stands between the network and the live page's HTTP server (cpp-httplib), which reads a
// request's headers for as long as a client keeps sending them and however large they are: 20
// clients sending a header line every few seconds held its threads, and 10 MB of headers were
// read whole. The front door accepts each connection itself and reads the request's head (its
// line and headers) within a deadline and a size: one that is too slow is answered 408, too
// large 431, and at most `kMostConnections` are open at once (503 beyond). A head that arrives
// whole goes to the server, listening on 127.0.0.1 only, as one request on a connection of its
// own, and the answer comes back as it is.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <set>
#include <string>

namespace engine::report {

// A TCP connection to 127.0.0.1:port (close-on-exec); -1 when it cannot be made.
int connect_loopback(int port);

class FrontDoor {
 public:
  static constexpr size_t kMostHeadBytes = 64 * 1024;
  static constexpr int kMostConnections = 64;

  // Listens on host:port (port 0: a free one); false from listening() when it cannot. A head
  // must arrive whole within `head_deadline` of the connection.
  FrontDoor(const std::string& host, int port, std::chrono::milliseconds head_deadline);
  ~FrontDoor();
  FrontDoor(const FrontDoor&) = delete;
  FrontDoor& operator=(const FrontDoor&) = delete;

  bool listening() const { return listener_ >= 0; }
  int port() const { return port_; }
  // Answers connections by passing them to the server at 127.0.0.1:inner_port until stop().
  void run(int inner_port);
  // From another thread: no new connection, the open ones shut, run() returns once they end.
  void stop();

 private:
  void serve(int client, int inner_port);
  bool stopping_now();

  std::chrono::milliseconds head_deadline_;
  int listener_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};  // a byte written here ends run()'s wait
  std::mutex mutex_;
  std::condition_variable ended_;
  std::set<int> open_;  // the client connections being served
  bool stopping_ = false;
};

}  // namespace engine::report
