// core::ChildProcess, the one way the engine starts a program, and core::InterruptScope.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/child_process.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/interrupt.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

core::ChildSpec shell(const std::string& command) {
  core::ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", command};
  spec.what = "a test shell";
  return spec;
}

// Everything the child writes to its pipe until the pipe ends.
std::string read_all(core::ChildProcess& child) {
  std::string text;
  while (child.output() >= 0) {
    pollfd p{child.output(), POLLIN, 0};
    ::poll(&p, 1, 1000);
    child.read_output([&](const std::string& chunk) { text += chunk; });
  }
  return text;
}

}  // namespace

TEST_CASE("a child's exit code, its signal, and how it ended in words") {
  core::ChildProcess exits(shell("exit 3"));
  const auto end = exits.wait();
  CHECK(end.exit_code == 3);
  CHECK(end.code() == 3);
  CHECK_FALSE(end.succeeded());
  CHECK(end.describe() == "exited with code 3");

  core::ChildProcess killed(shell("kill -SEGV $$"));
  CHECK(killed.wait().signal == SIGSEGV);
  CHECK(killed.wait().code() == 128 + SIGSEGV);
  CHECK(killed.wait().describe().find("was killed by SIGSEGV") == 0);
  CHECK(killed.poll()->signal == SIGSEGV);  // asked again: the same end
}

TEST_CASE("output to a pipe, to a file (appended), with variables set") {
  auto spec = shell("echo out $CHILD_TEST_VALUE; echo err >&2");
  spec.output = core::ChildOutput::kPipe;
  spec.variables = {{"CHILD_TEST_VALUE", "forty-two"}, {"PATH", "/usr/bin:/bin"}};
  core::ChildProcess piped(spec);
  const std::string text = read_all(piped);
  CHECK(text.find("out forty-two") != std::string::npos);
  CHECK(text.find("err") != std::string::npos);
  CHECK(piped.wait().succeeded());

  const std::string log = test::scratch_dir("child_process") + "/log.txt";
  std::ofstream(log) << "before\n";
  auto to_file = shell("echo after");
  to_file.output = core::ChildOutput::kFile;
  to_file.output_file = log;
  core::ChildProcess logged(to_file);
  CHECK(logged.wait().succeeded());
  CHECK(test::read_text(log) == "before\nafter\n");

  to_file.output_file = "/nonexistent/folder/log.txt";
  CHECK_THROWS_WITH_AS(core::ChildProcess{to_file},
                       doctest::Contains("/nonexistent/folder/log.txt"), core::IoError);
}

TEST_CASE("a program that cannot start is an error naming it, not a child that exits 127") {
  core::ChildSpec spec;
  spec.what = "a test program";
  spec.argv = {"/nonexistent/program"};
  CHECK_THROWS_WITH_AS(core::ChildProcess{spec},
                       doctest::Contains("cannot start a test program (/nonexistent/program): No "
                                         "such file or directory"),
                       core::IoError);
  spec.argv = {"no-such-program-anywhere"};
  CHECK_THROWS_WITH_AS(core::ChildProcess{spec}, doctest::Contains("is not in PATH"),
                       core::IoError);
  const std::string text_file = test::scratch_dir("child_process_start") + "/notes.txt";
  std::ofstream(text_file) << "not a program\n";
  std::filesystem::permissions(text_file, std::filesystem::perms::owner_all);
  spec.argv = {text_file};  // executable, but not a program
  CHECK_THROWS_WITH_AS(core::ChildProcess{spec},
                       doctest::Contains((text_file + "): Exec format error").c_str()),
                       core::IoError);
  CHECK(core::find_program("sh").has_value());
  CHECK_FALSE(core::find_program("no-such-program-anywhere").has_value());
}

TEST_CASE("a child inherits no descriptor but its standard ones, and has a group of its own") {
  const int open_here = ::open("/dev/null", O_RDONLY);  // without O_CLOEXEC
  REQUIRE(open_here > 2);
  auto spec = shell("ls /proc/self/fd | wc -l; ps -o pgid= -p $$; echo $$");
  spec.output = core::ChildOutput::kPipe;
  core::ChildProcess child(spec);
  const std::string text = read_all(child);
  ::close(open_here);
  CHECK(child.wait().succeeded());
  std::istringstream in(text);
  int descriptors = 0, group = 0, pid = 0;
  in >> descriptors >> group >> pid;
  // ls's own: 0, 1, 2 and the folder it lists; the shell's pipe to wc makes ls's stdout
  CHECK(descriptors == 4);
  CHECK(group == pid);
  CHECK(group == child.pid());
  CHECK(group != getpgrp());
}

TEST_CASE("a child still running when its owner goes is killed with its whole group") {
  pid_t pid = 0;
  {
    auto spec = shell("sleep 300 & wait");
    core::ChildProcess child(spec);
    pid = child.pid();
    CHECK_FALSE(child.poll().has_value());
  }
  // the group's other process (the sleep) was killed too: it is gone once init has reaped it,
  // which is an event to wait for, not a time (the guard is generous)
  bool gone = false;
  for (int i = 0; i < 3000 && !gone; ++i) {
    gone = ::kill(-pid, 0) != 0;
    if (!gone) ::usleep(10000);
  }
  CHECK(gone);
}

TEST_CASE("an address-space cap makes a large allocation fail in the child") {
  auto spec = shell("head -c 200000000 /dev/zero | tr '\\0' a | sort > /dev/null");
  spec.max_address_space = int64_t{64} << 20;
  spec.output = core::ChildOutput::kPipe;  // sort's complaint stays out of the test's output
  core::ChildProcess child(spec);
  read_all(child);
  CHECK_FALSE(child.wait().succeeded());
}

TEST_CASE("an interrupt scope records the first signal, counts them, and forgets them after") {
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  {
    core::InterruptScope scope(nullptr, core::SecondInterrupt::kCountEach);
    CHECK(core::pending_interrupt() == 0);
    std::raise(SIGTERM);
    std::raise(SIGINT);
    CHECK(core::pending_interrupt() == SIGTERM);
    CHECK(core::interrupt_count() == 2);
  }
  CHECK(core::pending_interrupt() == 0);
  CHECK(core::interrupt_count() == 0);
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  const bool restored = now.sa_handler == before.sa_handler;
  CHECK(restored);  // what there was before the scope
}

TEST_CASE("interrupt scopes nest: the outer one's state is back when the inner one ends") {
  core::InterruptScope outer(nullptr, core::SecondInterrupt::kCountEach);
  std::raise(SIGTERM);
  {
    core::InterruptScope inner(nullptr, core::SecondInterrupt::kCountEach);
    CHECK(core::pending_interrupt() == 0);  // the inner scope starts with nothing received
    std::raise(SIGINT);
    CHECK(core::pending_interrupt() == SIGINT);
  }
  CHECK(core::pending_interrupt() == SIGTERM);
  CHECK(core::interrupt_count() == 1);
}
