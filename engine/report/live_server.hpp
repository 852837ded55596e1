// `engine report --serve [FOLDER]`: a local web page over a folder of results that updates
// itself while runs train (docs/results.md). Read-only, GET only; it answers on 127.0.0.1
// unless told otherwise, then only to requests that name that host (a page elsewhere cannot
// reach it through a name of its own that resolves here); it serves its own page, the chart
// library (Debian's libjs-dygraphs) and JSON of the folder's result files, nothing else.
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace engine::report {

// Where Debian's libjs-dygraphs puts the chart library.
inline constexpr const char* kDygraphsFolder = "/usr/share/javascript/dygraphs";

struct ServeOptions {
  std::string folder = "runs";
  std::string host = "127.0.0.1";
  int port = 6006;  // 0: a free one
  std::string dygraphs_folder = kDygraphsFolder;
  // a request's line and headers must arrive whole within this of the connection (408 after)
  std::chrono::milliseconds head_deadline{10000};
};

class LiveServer {
 public:
  // Checks the folder and the chart library, and binds: a UsageError for a folder that is not
  // one or a port that is taken, an IoError when the chart library is not installed.
  explicit LiveServer(const ServeOptions& options);
  ~LiveServer();
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  int port() const;
  std::string url() const;  // http://HOST:PORT/
  // Answers requests until stop() (from another thread) is called.
  void run();
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace engine::report
