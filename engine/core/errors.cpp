#include "engine/core/errors.hpp"

#include <c10/util/Exception.h>

namespace engine::core {

std::string describe_exception(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    return c10_error->what_without_backtrace();
  }
  return e.what();
}

}  // namespace engine::core
