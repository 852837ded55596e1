#include "engine/bench/point_process.hpp"

#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "engine/core/child_process.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/timer.hpp"

namespace engine::bench {
namespace {

void keep_tail(std::string& output, const std::string& chunk, size_t limit) {
  output += chunk;
  if (output.size() > 2 * limit) output.erase(0, output.size() - limit);
}

}  // namespace

ChildResult run_child(const ChildOptions& options) {
  core::ChildSpec spec;
  spec.argv = options.argv;
  spec.variables = options.variables;
  spec.what = "a benchmark process";
  spec.output = core::ChildOutput::kPipe;
  spec.max_address_space = options.max_memory_bytes;
  core::ChildProcess child(spec);

  ChildResult result;
  const auto keep = [&](const std::string& chunk) {
    keep_tail(result.output, chunk, options.output_tail_bytes);
  };
  core::Timer timer;
  int kill_stage = 0;  // 0: running, 1: SIGTERM sent, 2: SIGKILL sent
  double kill_time = 0;
  std::optional<core::ChildEnd> end;
  while (!(end = child.poll())) {
    if (child.output() >= 0) {
      pollfd p{child.output(), POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) child.read_output(keep);
    } else {
      usleep(20000);
    }
    const double now = timer.seconds();
    if (kill_stage == 0) {
      const bool late = options.timeout_seconds > 0 && now > options.timeout_seconds;
      const bool stop = options.stop && options.stop();
      if (late || stop) {
        result.timed_out = late;
        result.stopped = stop && !late;
        child.signal_group(late ? SIGKILL : SIGTERM);
        kill_stage = late ? 2 : 1;
        kill_time = now;
      }
    } else if (kill_stage == 1 && now - kill_time > 5) {
      child.signal_group(SIGKILL);
      kill_stage = 2;
    }
  }
  child.read_output(keep, true);                    // whatever the child wrote before it ended
  if (kill_stage > 0) child.signal_group(SIGKILL);  // anything the child left in its group
  if (result.output.size() > options.output_tail_bytes) {
    result.output.erase(0, result.output.size() - options.output_tail_bytes);
  }
  result.seconds = timer.seconds();
  result.exit_code = end->exit_code;
  result.signal = end->signal;
  return result;
}

int64_t parse_memory_size(const std::string& text, const char* flag) {
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  std::string unit(end ? end : "");
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();   // GB, GIB -> G, GI
  if (unit.size() == 2 && unit.back() == 'I') unit.pop_back();  // GI -> G
  double scale = 0;
  if (unit.empty()) scale = 1;
  if (unit == "K") scale = 1024.0;
  if (unit == "M") scale = 1024.0 * 1024;
  if (unit == "G") scale = 1024.0 * 1024 * 1024;
  if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  if (end == text.c_str() || scale == 0 || !(number > 0) || !std::isfinite(number)) {
    throw core::UsageError(std::string(flag) + " takes a size such as 2G, 512M or 1.5G, got '" +
                           text + "'");
  }
  return static_cast<int64_t>(number * scale);
}

double device_memory_fraction(const std::string& text, int64_t device_bytes, const char* flag) {
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  const bool plain = end != text.c_str() && end && *end == '\0';
  if (plain && number > 0 && number <= 1) return number;
  if (plain && number <= 0) {
    throw core::UsageError(std::string(flag) +
                           " takes a fraction of the device's memory in (0, 1] "
                           "or a size such as 20G, got '" +
                           text + "'");
  }
  const int64_t bytes = parse_memory_size(text, flag);
  if (device_bytes > 0 && bytes > device_bytes) {
    throw core::UsageError(std::string(flag) + " " + text + " is more than the device's " +
                           std::to_string(device_bytes >> 20) + " MiB");
  }
  return device_bytes > 0 ? static_cast<double>(bytes) / static_cast<double>(device_bytes) : 0.0;
}

Launcher parse_launcher(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\'' || c == '"') {
      const auto close = text.find(c, i + 1);
      if (close == std::string::npos) {
        throw core::UsageError("the launcher '" + text + "' has a " + std::string(1, c) +
                               " quote that does not close");
      }
      word += text.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  Launcher launcher;
  size_t i = 0;
  for (; i < words.size(); ++i) {  // NAME=VALUE, as a shell's assignments before a command
    const auto eq = words[i].find('=');
    const std::string name = eq == std::string::npos ? "" : words[i].substr(0, eq);
    const bool assignment = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                            name.find_first_not_of(
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                "qrstuvwxyz0123456789_") == std::string::npos;
    if (!assignment) break;
    launcher.variables.emplace_back(name, words[i].substr(eq + 1));
  }
  launcher.prefix.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  return launcher;
}

}  // namespace engine::bench
