#include "engine/core/statuses.hpp"

#include <utility>

namespace engine::core {
namespace {

template <typename Status, size_t N>
const char* name_in(const std::pair<Status, const char*> (&names)[N], Status status) {
  for (const auto& [value, name] : names) {
    if (value == status) return name;
  }
  return "unknown";
}

template <typename Status, size_t N>
std::optional<Status> status_in(const std::pair<Status, const char*> (&names)[N],
                                const std::string& text) {
  for (const auto& [value, name] : names) {
    if (text == name) return value;
  }
  return std::nullopt;
}

constexpr std::pair<FileStatus, const char*> kFileStatuses[] = {
    {FileStatus::kRunning, "running"},
    {FileStatus::kCompleted, "completed"},
    {FileStatus::kFailed, "failed"},
    {FileStatus::kInterrupted, "interrupted"}};
constexpr std::pair<PointStatus, const char*> kPointStatuses[] = {
    {PointStatus::kOk, "ok"},
    {PointStatus::kFailed, "failed"},
    {PointStatus::kTimeout, "timeout"},
    {PointStatus::kSkipped, "skipped"},
    {PointStatus::kInactive, "inactive"}};
constexpr std::pair<TrialStatus, const char*> kTrialStatuses[] = {
    {TrialStatus::kRunning, "running"},     {TrialStatus::kPaused, "paused"},
    {TrialStatus::kCompleted, "completed"}, {TrialStatus::kStopped, "stopped"},
    {TrialStatus::kFailed, "failed"},       {TrialStatus::kInterrupted, "interrupted"}};

}  // namespace

const char* name_of(FileStatus status) {
  return name_in(kFileStatuses, status);
}
const char* name_of(PointStatus status) {
  return name_in(kPointStatuses, status);
}
const char* name_of(TrialStatus status) {
  return name_in(kTrialStatuses, status);
}

std::optional<PointStatus> point_status(const std::string& name) {
  return status_in(kPointStatuses, name);
}
std::optional<TrialStatus> trial_status(const std::string& name) {
  return status_in(kTrialStatuses, name);
}

}  // namespace engine::core
