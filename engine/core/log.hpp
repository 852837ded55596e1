// The console log: "[info] ...", "[warn] ..." on stderr, through spdlog.
//
// Callers format with fmt's syntax ("{} of {}") but only pack their arguments here: the
// formatting code (fmt's writers for numbers and strings) is compiled once, in log.cpp,
// not in every file that logs a line (it was about 10% of the engine's emitted code).
#pragma once

#include <fmt/core.h>

namespace engine::core::log {

enum class Level { debug, info, warn };

// Sets up the "engine" logger on stderr; the first thing main does.
void start();
// Lines below `level` are dropped (--quiet: warn, --verbose: debug).
void set_level(Level level);
bool enabled(Level level);

// Formats and logs the line when `level` is enabled.
void write(Level level, fmt::string_view format, fmt::format_args args);

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  write(Level::debug, format, fmt::make_format_args(args...));
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  write(Level::info, format, fmt::make_format_args(args...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  write(Level::warn, format, fmt::make_format_args(args...));
}

}  // namespace engine::core::log
