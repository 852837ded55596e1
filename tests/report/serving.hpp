// engine report --serve's server over a folder, on a free port, answering on a thread of its
// own while in scope (the tests' stand-in for the command, which answers until Ctrl-C).
#pragma once

#include <string>
#include <thread>

#include "engine/report/live_server.hpp"

namespace engine::test {

struct Serving {
  report::LiveServer server;
  std::thread answering;

  explicit Serving(const std::string& folder) : Serving(options(folder)) {}
  explicit Serving(const report::ServeOptions& given)
      : server(given), answering([this] { server.run(); }) {}
  ~Serving() {
    server.stop();
    answering.join();
  }

  static report::ServeOptions options(const std::string& folder) {
    report::ServeOptions options;
    options.folder = folder;
    options.port = 0;
    return options;
  }
};

}  // namespace engine::test
