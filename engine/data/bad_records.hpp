// What sources read with skip_bad = true do with a bad record: log it (once per record, not
// once per epoch) and let the loader count it.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

namespace engine::data {

class BadRecords {
 public:
  explicit BadRecords(bool skip) : skip_(skip) {}
  bool skip() const { return skip_; }
  // Logs a warning for `record` (an index into the source) the first time it is reported.
  void report(int64_t record, const std::string& message) const;

 private:
  bool skip_;
  mutable std::mutex mutex_;
  mutable std::set<int64_t> reported_;
};

}  // namespace engine::data
