// A real browser for the live page's test: Debian's chromium, headless, driven through the
// DevTools protocol on a pipe (--remote-debugging-pipe: commands in on fd 3, answers out on
// fd 4, each a JSON text ended by a NUL byte). It opens a page, evaluates expressions in it,
// waits for one to hold, and takes a screenshot.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace engine::test {

class HeadlessBrowser {
 public:
  // Starts chromium with a window of width x height pixels, its profile in `profile_dir`; a
  // std::runtime_error when it cannot (not installed: scripts/install-deps.sh --tests).
  HeadlessBrowser(const std::string& profile_dir, int width, int height);
  ~HeadlessBrowser();
  HeadlessBrowser(const HeadlessBrowser&) = delete;
  HeadlessBrowser& operator=(const HeadlessBrowser&) = delete;

  void open(const std::string& url);
  // The value of a JavaScript expression in the page (returned by value).
  nlohmann::json evaluate(const std::string& expression);
  // Evaluates `expression` again each time the page may have changed, until it is true; false
  // when `limit` passes first (the page never showed it: a failure, not a wait).
  bool wait_for(const std::string& expression,
                std::chrono::seconds limit = std::chrono::seconds(60));
  // The page as a PNG file.
  void screenshot(const std::string& path);

 private:
  nlohmann::json command(const std::string& method, const nlohmann::json& params,
                         bool in_page = true);
  nlohmann::json read_message(std::chrono::steady_clock::time_point deadline);

  pid_t pid_ = -1;
  int to_browser_ = -1, from_browser_ = -1;
  int next_id_ = 1;
  std::string session_;
  std::string pending_;  // bytes read past the last message
};

}  // namespace engine::test
