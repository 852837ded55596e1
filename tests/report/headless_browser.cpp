#include "tests/report/headless_browser.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <vector>

namespace engine::test {
namespace {

using Clock = std::chrono::steady_clock;

std::string decoded_base64(const std::string& text) {
  std::string out;
  int bits = 0, value = 0;
  for (char c : text) {
    int digit = -1;
    if (c >= 'A' && c <= 'Z') digit = c - 'A';
    if (c >= 'a' && c <= 'z') digit = c - 'a' + 26;
    if (c >= '0' && c <= '9') digit = c - '0' + 52;
    if (c == '+') digit = 62;
    if (c == '/') digit = 63;
    if (digit < 0) continue;
    value = (value << 6) | digit;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((value >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

HeadlessBrowser::HeadlessBrowser(const std::string& profile_dir, int width, int height) {
  int to[2], from[2];
  if (::pipe(to) != 0 || ::pipe(from) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> args{
      "chromium",
      "--headless",
      "--disable-gpu",
      "--remote-debugging-pipe",
      "--no-first-run",
      "--hide-scrollbars",
      "--user-data-dir=" + profile_dir,
      "--window-size=" + std::to_string(width) + "," + std::to_string(height)};
  if (::geteuid() == 0) args.push_back("--no-sandbox");  // chromium's sandbox refuses root
  args.push_back("about:blank");
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(to[0], 3);
    ::dup2(from[1], 4);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    for (int fd = 5; fd < 1024; ++fd) ::close(fd);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp("chromium", argv.data());
    ::_exit(127);
  }
  ::close(to[0]);
  ::close(from[1]);
  to_browser_ = to[1];
  from_browser_ = from[0];
  if (pid_ < 0) throw std::runtime_error("cannot start chromium");
  const auto target = command("Target.createTarget", {{"url", "about:blank"}}, false);
  const auto attached = command("Target.attachToTarget",
                                {{"targetId", target.at("targetId")}, {"flatten", true}}, false);
  session_ = attached.at("sessionId").get<std::string>();
  command("Page.enable", nlohmann::json::object());
}

HeadlessBrowser::~HeadlessBrowser() {
  if (pid_ > 0) {
    try {
      command("Browser.close", nlohmann::json::object(), false);
    } catch (const std::exception&) {
      ::kill(pid_, SIGKILL);
    }
    ::close(to_browser_);
    ::close(from_browser_);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

nlohmann::json HeadlessBrowser::read_message(Clock::time_point deadline) {
  for (;;) {
    const size_t end = pending_.find('\0');
    if (end != std::string::npos) {
      auto message = nlohmann::json::parse(pending_.substr(0, end));
      pending_.erase(0, end + 1);
      return message;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return nullptr;
    pollfd fd{from_browser_, POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(left)) <= 0) continue;
    char buffer[65536];
    const ssize_t got = ::read(from_browser_, buffer, sizeof buffer);
    if (got <= 0) throw std::runtime_error("chromium closed its DevTools pipe (did it start?)");
    pending_.append(buffer, static_cast<size_t>(got));
  }
}

nlohmann::json HeadlessBrowser::command(const std::string& method, const nlohmann::json& params,
                                        bool in_page) {
  const int id = next_id_++;
  nlohmann::json message{{"id", id}, {"method", method}, {"params", params}};
  if (in_page) message["sessionId"] = session_;
  const std::string text = message.dump() + std::string(1, '\0');
  if (::write(to_browser_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    throw std::runtime_error("cannot write to chromium");
  }
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  for (;;) {
    const auto answer = read_message(deadline);
    if (answer.is_null()) throw std::runtime_error(method + ": chromium did not answer");
    if (!answer.contains("id") || answer["id"] != id) continue;  // an event, or another answer
    if (answer.contains("error")) throw std::runtime_error(method + ": " + answer["error"].dump());
    return answer["result"];
  }
}

void HeadlessBrowser::open(const std::string& url) {
  command("Page.navigate", {{"url", url}});
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  for (;;) {
    const auto message = read_message(deadline);
    if (message.is_null()) throw std::runtime_error("the page did not load: " + url);
    if (message.value("method", "") == "Page.loadEventFired") return;
  }
}

nlohmann::json HeadlessBrowser::evaluate(const std::string& expression) {
  const auto result =
      command("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}});
  if (result.contains("exceptionDetails")) {
    throw std::runtime_error("in the page: " + result["exceptionDetails"].dump());
  }
  return result["result"].value("value", nlohmann::json());
}

bool HeadlessBrowser::wait_for(const std::string& expression, std::chrono::seconds limit) {
  // a promise in the page that a MutationObserver settles: the expression is checked on every
  // change of the page, and the answer comes when it holds
  const std::string waiting =
      "new Promise((resolve) => {"
      "  const holds = () => { try { return !!(" +
      expression +
      "); } catch (e) { return false; } };"
      "  if (holds()) return resolve(true);"
      "  const observer = new MutationObserver(() => {"
      "    if (holds()) { observer.disconnect(); resolve(true); } });"
      "  observer.observe(document, {subtree: true, childList: true, attributes: true,"
      "                              characterData: true});"
      "})";
  const int id = next_id_++;
  const nlohmann::json message{
      {"id", id},
      {"method", "Runtime.evaluate"},
      {"sessionId", session_},
      {"params", {{"expression", waiting}, {"awaitPromise", true}, {"returnByValue", true}}}};
  const std::string text = message.dump() + std::string(1, '\0');
  if (::write(to_browser_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    throw std::runtime_error("cannot write to chromium");
  }
  const auto deadline = Clock::now() + limit;
  for (;;) {
    const auto answer = read_message(deadline);
    if (answer.is_null()) return false;
    if (answer.contains("id") && answer["id"] == id) {
      return answer.contains("result") && answer["result"]["result"].value("value", false);
    }
  }
}

void HeadlessBrowser::screenshot(const std::string& path) {
  const auto result =
      command("Page.captureScreenshot", {{"format", "png"}, {"captureBeyondViewport", true}});
  std::ofstream out(path, std::ios::binary);
  out << decoded_base64(result.at("data").get<std::string>());
}

}  // namespace engine::test
