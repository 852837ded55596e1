#include "engine/core/signals.hpp"

#include <cctype>
#include <csignal>
#include <cstring>
#include <utility>

namespace engine::core {
namespace {

constexpr std::pair<int, const char*> kSignalNames[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"},
    {SIGINT, "SIGINT"},   {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
    {SIGHUP, "SIGHUP"},   {SIGPIPE, "SIGPIPE"}};

}  // namespace

const char* signal_name(int signal) {
  for (const auto& [number, name] : kSignalNames) {
    if (number == signal) return name;
  }
  return nullptr;
}

std::string signal_description(int signal) {
  std::string text = strsignal(signal);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  if (const char* name = signal_name(signal)) return std::string(name) + " (" + text + ")";
  return "signal " + std::to_string(signal) + " (" + text + ")";
}

}  // namespace engine::core
