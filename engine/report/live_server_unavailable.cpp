// engine report --serve in a build made without Debian's cpp-httplib (a CUDA build against a
// PyTorch wheel on a machine that lacks it): the command says so instead of the build failing.
#include "engine/core/errors.hpp"
#include "engine/report/live_server.hpp"

namespace engine::report {

struct LiveServer::State {};

LiveServer::LiveServer(const ServeOptions&) {
  throw core::UsageError(
      "engine report --serve: this engine was built without a web server (Debian's "
      "libcpp-httplib-dev was missing at build time: scripts/install-deps.sh, then build again)");
}

LiveServer::~LiveServer() = default;

int LiveServer::port() const {
  return 0;
}

std::string LiveServer::url() const {
  return {};
}

void LiveServer::run() {}

void LiveServer::stop() {}

}  // namespace engine::report
