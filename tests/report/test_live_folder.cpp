// engine report --serve without a browser: what the folder lists and reads (damaged, cut short,
// empty, being written, odd names), and what the server answers to requests that try to reach
// outside the folder, write, or come through another host name.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "engine/core/errors.hpp"
#include "engine/core/statuses.hpp"
#include "engine/io/run_writer.hpp"
#include "engine/report/live_folder.hpp"
#include "engine/report/live_json.hpp"
#include "engine/report/live_server.hpp"
#include "tests/report/raw_http.hpp"
#include "tests/report/serving.hpp"
#include "tests/test_support.hpp"

using namespace engine;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string write_live_run(const std::string& path, double lr, bool finish = true) {
  fs::create_directories(fs::path(path).parent_path());
  io::RunInfo info;
  info.name = "demo";
  io::RunWriter w(path, info);
  w.write_hparams({{"lr", lr}});
  for (int step = 1; step <= 3; ++step) {
    w.append_metrics("train", step, step, step, {{"loss", lr / step}});
    w.append_metrics("validation", step, step, step, {{"accuracy", 0.5 + 0.1 * step}});
  }
  if (finish) w.finish(core::FileStatus::kCompleted);
  return path;
}

json entry_named(const json& folder, const std::string& path) {
  for (const auto& f : folder["files"]) {
    if (f["path"] == path) return f;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the folder lists every result file, and says which cannot be read and why") {
  const auto dir = test::scratch_dir("live-folder");
  const auto runs = dir + "/runs";
  const auto good = write_live_run(runs + "/demo/a.h5", 0.1);
  // cut short: the first half of a real run file
  const auto whole = test::read_text(good);
  std::ofstream(runs + "/demo/cut.h5", std::ios::binary) << whole.substr(0, whole.size() / 2);
  std::ofstream(runs + "/garbage.h5") << "not HDF5 at all";
  std::ofstream(runs + "/reserved.h5");                // a name a run took before it wrote anything
  fs::copy_file(good, runs + "/demo/ckpt-step-3.h5");  // checkpoints are not listed
  const std::string odd = "odd name & <i>x<i> 'q' %41#?.h5";
  fs::copy_file(good, runs + "/" + odd);
  io::RunInfo info;
  info.name = "live";
  io::RunWriter writing(runs + "/live.h5", info);  // held open: being written
  writing.append_metrics("train", 1, 0.1, 0.5, {{"loss", 1.0}});
  writing.flush();

  report::LiveFolder folder(runs);
  const auto look = json::parse(report::folder_json(folder));
  CHECK(look["files"].size() == 6);
  CHECK(entry_named(look, "demo/a.h5")["kind"] == "run");
  CHECK(entry_named(look, "demo/a.h5")["state"] == "");
  for (const char* bad : {"demo/cut.h5", "garbage.h5", "reserved.h5"}) {
    CAPTURE(bad);
    CHECK(entry_named(look, bad)["kind"] == "unreadable");
    CHECK(entry_named(look, bad)["state"].get<std::string>().find(bad) != std::string::npos);
  }
  CHECK(entry_named(look, "reserved.h5")["state"].get<std::string>().find("is empty") !=
        std::string::npos);
  CHECK(entry_named(look, odd)["kind"] == "run");
  CHECK(entry_named(look, "live.h5")["state"] == "being written");
  CHECK(entry_named(look, "demo/ckpt-step-3.h5").is_null());
  // the runs table holds the readable runs, by their paths in the folder
  const auto& table = look["tables"][0];
  CHECK(table["role"] == "runs");
  CHECK(table["rows"].size() == 3);
  CHECK(table["metrics"].dump().find("validation.accuracy") != std::string::npos);

  CHECK(report::run_json(folder, odd).has_value());
  CHECK_THROWS_AS(report::run_json(folder, "demo/cut.h5"), core::IoError);
  CHECK_FALSE(report::run_json(folder, "demo/ckpt-step-3.h5").has_value());
  CHECK_FALSE(report::run_json(folder, "no/such.h5").has_value());
}

TEST_CASE("nothing outside the folder is listed or served: '..', absolute paths, symbolic links") {
  const auto dir = test::scratch_dir("live-outside");
  const auto runs = dir + "/runs";
  write_live_run(runs + "/demo/a.h5", 0.1);
  const auto outside = write_live_run(dir + "/elsewhere/secret.h5", 0.3);
  fs::create_symlink(outside, runs + "/link.h5");                   // a file that leads out
  fs::create_directory_symlink(dir + "/elsewhere", runs + "/out");  // a folder that does
  fs::create_symlink(runs + "/demo/a.h5", runs + "/inside.h5");     // one that stays in

  report::LiveFolder folder(runs);
  const auto look = json::parse(report::folder_json(folder));
  CHECK(look["files"].size() == 2);
  CHECK(entry_named(look, "inside.h5")["kind"] == "run");
  CHECK(look.dump().find("secret") == std::string::npos);
  for (const char* path :
       {"link.h5", "out/secret.h5", "../elsewhere/secret.h5", "demo/../../elsewhere/secret.h5"}) {
    CAPTURE(path);
    CHECK_FALSE(report::run_json(folder, path).has_value());
  }
  CHECK_FALSE(report::run_json(folder, outside).has_value());

  test::Serving serving(runs);
  const int port = serving.server.port();
  for (const std::string& target : std::vector<std::string>{
           "/api/run?path=..%2Felsewhere%2Fsecret.h5", "/api/run?path=" + outside,
           "/api/run?path=link.h5", "/../elsewhere/secret.h5", "/%2e%2e/elsewhere/secret.h5",
           "/..%2f..%2fetc%2fpasswd", "/live.js/../../../etc/passwd", "/etc/passwd",
           "/dygraph.min.js/..", "/index.html"}) {
    CAPTURE(target);
    const auto answer = test::raw_http(port, "GET", target);
    CHECK(answer.status == 404);
    CHECK(answer.body.find("lr") == std::string::npos);
  }
  CHECK(test::raw_http(port, "GET", "/api/run?path=demo%2Fa.h5").status == 200);
  CHECK(test::raw_http(port, "GET", "/api/run?path=inside.h5").status == 200);
}

TEST_CASE("the server answers GET from its own host only, and writes nothing") {
  const auto dir = test::scratch_dir("live-server");
  write_live_run(dir + "/demo/a.h5", 0.1);
  std::ofstream(dir + "/garbage.h5") << "not HDF5 at all";
  test::Serving serving(dir);
  const int port = serving.server.port();
  CHECK(serving.server.url() == "http://127.0.0.1:" + std::to_string(port) + "/");

  const auto page = test::raw_http(port, "GET", "/");
  CHECK(page.status == 200);
  CHECK(page.body.find("<script src=\"/live.js\"") != std::string::npos);
  CHECK(page.head.find("Content-Security-Policy: default-src 'self'") != std::string::npos);
  CHECK(test::raw_http(port, "GET", "/dygraph.min.js").body.size() > 10000);
  CHECK(test::raw_http(port, "GET", "/curves.js").status == 200);
  CHECK(test::raw_http(port, "GET", "/nothing.js").status == 404);
  const auto folder = test::raw_http(port, "GET", "/api/folder");
  CHECK(folder.status == 200);
  CHECK(json::parse(folder.body)["files"].size() == 2);
  const auto damaged = test::raw_http(port, "GET", "/api/run?path=garbage.h5");
  CHECK(damaged.status == 422);
  CHECK(damaged.body.find("not an HDF5 file") != std::string::npos);

  for (const char* method : {"POST", "PUT", "DELETE", "PATCH"}) {
    CAPTURE(method);
    CHECK(test::raw_http(port, method, "/api/folder").status == 405);
  }
  // a page elsewhere that names this address under a host name of its own (DNS rebinding)
  const auto rebound =
      test::raw_http(port, "GET", "/api/folder", "attacker.example:" + std::to_string(port));
  CHECK(rebound.status == 403);
  CHECK(rebound.body.find("demo") == std::string::npos);
  CHECK(test::raw_http(port, "GET", "/", "localhost:" + std::to_string(port)).status == 200);
  CHECK(fs::exists(dir + "/garbage.h5"));
}

TEST_CASE("twenty slow clients leave the server threads to answer the page on") {
  const auto dir = test::scratch_dir("live-slow-clients");
  test::Serving serving(dir);
  const int port = serving.server.port();
  // each sends a request's first line, then a header line a second: never a whole request
  std::vector<int> slow;
  for (int i = 0; i < 20; ++i) {
    const int fd = test::connect_loopback(port);
    REQUIRE(fd >= 0);
    slow.push_back(fd);
  }
  std::atomic<bool> answered{false};
  std::thread trickle([&] {
    for (int round = 0; !answered && round < 90; ++round) {
      const std::string line = round == 0 ? "GET / HTTP/1.1\r\n" : "X-Slow: 1\r\n";
      for (int fd : slow) ::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::seconds(1));  // the clients' pace, not a wait
    }
  });
  // the page's own request, while they trickle (they hold 20 threads; httplib had 8)
  const auto answer = test::raw_http(port, "GET", "/api/folder");
  answered = true;
  trickle.join();
  for (int fd : slow) ::close(fd);
  CHECK(answer.status == 200);
}

namespace {

// What the server answers to `bytes` sent as they are (the start of its answer; the 60 s guard
// of raw_http's kind against a hang).
std::string answer_to(int port, const std::string& bytes) {
  const int fd = test::connect_loopback(port);
  std::string text;
  if (fd < 0) return text;
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  char buffer[256];
  const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
  if (got > 0) text.assign(buffer, static_cast<size_t>(got));
  ::close(fd);
  return text;
}

}  // namespace

TEST_CASE("a request's head must arrive whole, in time and of a sane size") {
  auto options = test::Serving::options(test::scratch_dir("live-heads"));
  options.head_deadline = std::chrono::milliseconds(500);
  test::Serving serving(options);
  const int port = serving.server.port();
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  // 100 KB of headers: refused, not read whole into the server's memory
  const std::string huge = "GET / HTTP/1.1\r\n" + host + "X-Big: " + std::string(100000, 'a');
  CHECK(answer_to(port, huge + "\r\n\r\n").rfind("HTTP/1.1 431 ", 0) == 0);
  // a head that never ends: answered 408 once the deadline has passed (the answer is the event)
  CHECK(answer_to(port, "GET / HTTP/1.1\r\n" + host + "X-Slow: 1\r\n").rfind("HTTP/1.1 408 ", 0) ==
        0);
  // and the page is answered as ever, through the same door
  CHECK(test::raw_http(port, "GET", "/api/folder").status == 200);
}

TEST_CASE("a server that cannot start says why") {
  const auto dir = test::scratch_dir("live-refusals");
  report::ServeOptions options;
  options.folder = dir + "/missing";
  CHECK_THROWS_WITH_AS(report::LiveServer{options}, doctest::Contains("is not a folder"),
                       core::UsageError);
  options.folder = dir;
  options.dygraphs_folder = dir + "/no-dygraphs";
  CHECK_THROWS_WITH_AS(report::LiveServer{options}, doctest::Contains("libjs-dygraphs"),
                       core::IoError);
  options.dygraphs_folder = report::kDygraphsFolder;
  options.port = 0;
  report::LiveServer first(options);
  options.port = first.port();
  CHECK_THROWS_WITH_AS(report::LiveServer{options}, doctest::Contains("give another --port"),
                       core::UsageError);
}

TEST_CASE("a file whose damage crashes or hangs HDF5 is shown as damaged; the server lives on") {
  // bytes of tests/fuzz/base/run.h5 that HDF5 1.10 crashes on (965) or loops on (935) when
  // flipped (tests/bad_input/damaged_bytes.sh)
  const char* source = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE(source != nullptr);
  const auto base = test::read_text(std::string(source) + "/tests/fuzz/base/run.h5");
  REQUIRE(base.size() > 2000);
  const auto dir = test::scratch_dir("live-crash");
  write_live_run(dir + "/demo/a.h5", 0.1);
  for (const size_t offset : {965, 935}) {
    std::string bytes = base;
    bytes[offset] = static_cast<char>(bytes[offset] ^ 0xff);
    std::ofstream(dir + "/flipped-" + std::to_string(offset) + ".h5", std::ios::binary) << bytes;
  }
  ::setenv("ENGINE_READ_TIMEOUT", "3", 1);  // the loop is taken for damage after 3 s
  report::LiveFolder folder(dir);
  const auto look = json::parse(report::folder_json(folder));
  // 935 makes every read go round in circles; 965 sends HDF5 through a garbage offset, which
  // crashes or reads on depending on what the process's memory holds there (likely HDF5's
  // free lists, which the reading child inherits): it crashed in the whole binary and read as
  // a run when this case ran alone. Either way the server lives on and says what it found.
  const auto loop = entry_named(look, "flipped-935.h5");
  CHECK(loop["kind"] == "unreadable");
  CHECK(loop["state"].get<std::string>().find("damaged") != std::string::npos);
  const auto garbage = entry_named(look, "flipped-965.h5");
  const bool crashed = garbage["kind"] == "unreadable";
  if (crashed) CHECK(garbage["state"].get<std::string>().find("damaged") != std::string::npos);
  if (!crashed) CHECK(garbage["kind"] == "run");
  CHECK(entry_named(look, "demo/a.h5")["kind"] == "run");
  CHECK(look["tables"][0]["rows"].size() == (crashed ? 1u : 2u));
}
