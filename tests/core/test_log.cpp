// core::log: fmt's syntax, spdlog's levels, the formatting compiled in one file.
#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <string>

#include "engine/core/log.hpp"

namespace core_log = engine::core::log;

namespace {

// Routes the default logger into a string for the test's lifetime.
struct CapturedLog {
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> before = spdlog::default_logger();
  CapturedLog() {
    auto logger = std::make_shared<spdlog::logger>(
        "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(text));
    logger->set_pattern("[%l] %v");
    spdlog::set_default_logger(logger);
    core_log::set_level(core_log::Level::info);
  }
  ~CapturedLog() { spdlog::set_default_logger(before); }
};

}  // namespace

TEST_CASE("log: arguments formatted with fmt's syntax, one line per call") {
  CapturedLog captured;
  const std::string name = "mnist";
  core_log::info("training '{}' on {} with {} threads, lr {:.3f}", name, "cpu", 2, 0.1);
  core_log::warn("{} holds no {} state", std::string("run.h5"), 'x');
  CHECK(captured.text.str() ==
        "[info] training 'mnist' on cpu with 2 threads, lr 0.100\n"
        "[warning] run.h5 holds no x state\n");
}

TEST_CASE("log: lines below the level are dropped (--quiet, --verbose)") {
  CapturedLog captured;
  core_log::debug("hidden {}", 1);
  CHECK_FALSE(core_log::enabled(core_log::Level::debug));
  core_log::set_level(core_log::Level::warn);
  core_log::info("hidden too");
  core_log::warn("shown {}", 2);
  core_log::set_level(core_log::Level::debug);
  CHECK(core_log::enabled(core_log::Level::debug));
  core_log::debug("shown {}", 3);
  CHECK(captured.text.str() == "[warning] shown 2\n[debug] shown 3\n");
  core_log::set_level(core_log::Level::info);
}
