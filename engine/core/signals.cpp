#include "engine/core/signals.hpp"

#include <cctype>
#include <csignal>
#include <cstring>
#include <utility>

namespace engine::core {

std::string signal_description(int signal) {
  static const std::pair<int, const char*> kNames[] = {
      {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"},
      {SIGINT, "SIGINT"},   {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
      {SIGHUP, "SIGHUP"},   {SIGPIPE, "SIGPIPE"}};
  std::string text = strsignal(signal);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  for (const auto& [number, name] : kNames) {
    if (number == signal) return std::string(name) + " (" + text + ")";
  }
  return "signal " + std::to_string(signal) + " (" + text + ")";
}

}  // namespace engine::core
