#include "engine/core/activity.hpp"

#include <exception>

namespace engine::core {
namespace {

thread_local std::string failed_in_activity;

}  // namespace

Activity::Activity(const char* what, int64_t number)
    : what_(what), number_(number), uncaught_(std::uncaught_exceptions()) {
  failed_in_activity.clear();  // the last failure was handled: a new activity has begun
}

Activity::~Activity() {
  // the innermost scope an exception leaves is destroyed first: the outer ones keep its name
  if (std::uncaught_exceptions() > uncaught_ && failed_in_activity.empty()) {
    // the exception on its way is often std::bad_alloc: building the name must not throw a
    // second one out of a destructor during unwinding (std::terminate)
    try {
      failed_in_activity = what_;
      if (number_ >= 0) failed_in_activity += " " + std::to_string(number_);
    } catch (...) {
      failed_in_activity.clear();
    }
  }
}

const std::string& Activity::failed_in() {
  return failed_in_activity;
}

}  // namespace engine::core
