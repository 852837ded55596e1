#include "engine/data/bad_records.hpp"

#include "engine/core/log.hpp"

namespace engine::data {

void BadRecords::report(int64_t record, const std::string& message) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (reported_.insert(record).second) core::log::warn("skipping a bad record: {}", message);
}

}  // namespace engine::data
