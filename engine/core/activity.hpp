// What the engine is doing, for failures whose own message cannot say where they happened: out
// of memory is "CPU: not enough memory: you tried to allocate 2147483648 bytes" from wherever it
// ran out. A scope names its activity; an exception that leaves the scope records the innermost
// name, and describe_exception puts it into an out-of-memory message.
#pragma once

#include <cstdint>
#include <string>

namespace engine::core {

class Activity {
 public:
  // `what` must outlive the scope (a string literal); with a number, the activity reads
  // "WHAT NUMBER" ("the backward pass of step" 12). Cheap: no allocation unless it fails.
  explicit Activity(const char* what, int64_t number = -1);
  ~Activity();
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;

  // The innermost activity the last exception on this thread left ("the backward pass of step
  // 12"), or "" when it left none (or a new activity has begun since).
  static const std::string& failed_in();

 private:
  const char* what_;
  int64_t number_;
  int uncaught_;
};

}  // namespace engine::core
