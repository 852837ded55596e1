#include "engine/core/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace engine::core::log {
namespace {

spdlog::level::level_enum spdlog_level(Level level) {
  switch (level) {
    case Level::debug:
      return spdlog::level::debug;
    case Level::info:
      return spdlog::level::info;
    case Level::warn:
      return spdlog::level::warn;
  }
  return spdlog::level::info;
}

}  // namespace

void start() {
  spdlog::set_default_logger(spdlog::stderr_color_mt("engine"));
  spdlog::set_pattern("%^[%l]%$ %v");
}

void set_level(Level level) {
  spdlog::set_level(spdlog_level(level));
}

bool enabled(Level level) {
  return spdlog::should_log(spdlog_level(level));
}

void write(Level level, fmt::string_view format, fmt::format_args args) {
  if (!enabled(level)) return;
  spdlog::log(spdlog_level(level), "{}", fmt::vformat(format, args));
}

}  // namespace engine::core::log
