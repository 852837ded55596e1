// Ranks of a process group as threads of one test process.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace engine::test {

// Runs body(rank) on `size` threads; returns what each threw ("" when nothing).
inline std::vector<std::string> on_ranks(int size, const std::function<void(int)>& body) {
  std::vector<std::string> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace engine::test
