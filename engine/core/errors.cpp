#include "engine/core/errors.hpp"

#include <c10/util/Exception.h>

#include <new>

#include "engine/core/activity.hpp"

namespace engine::core {
namespace {

// `text` with a hint appended when it is libtorch's "not implemented for 'Half'": float16
// arithmetic on the CPU, and what to use instead.
std::string with_float16_hint(std::string text) {
  // libtorch 1.13's CPU kernels: "addmm_impl_cpu_" not implemented for 'Half'
  if (text.find("not implemented for 'Half'") != std::string::npos &&
      text.find("float16 arithmetic") == std::string::npos) {
    text +=
        " (float16 arithmetic is not implemented on the CPU by this libtorch: on the CPU use "
        "float32, or bfloat16 (precision = 'bfloat16', x:to('bfloat16')); float16 needs CUDA)";
  }
  return text;
}

}  // namespace

std::string describe_exception(const std::exception& e) {
  // out of memory is said with where it ran out: the allocator's own words do not say
  const std::string& where = Activity::failed_in();
  const std::string in_where = where.empty() ? "" : " in " + where;
  if (auto* oom = dynamic_cast<const c10::OutOfMemoryError*>(&e)) {
    return "out of memory" + in_where + ": " + oom->what_without_backtrace();
  }
  if (dynamic_cast<const std::bad_alloc*>(&e)) {
    return "out of memory" + in_where + " (std::bad_alloc)";
  }
  // the engine's own (a layer's forward) and a script's error that ran out of memory in C++
  if (auto* error = dynamic_cast<const Error*>(&e);
      error && error->exit_code() == kExitOutOfMemory && !where.empty() &&
      std::string(e.what()).find(where) == std::string::npos) {
    return std::string(e.what()) + " (in " + where + ")";
  }
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    return with_float16_hint(c10_error->what_without_backtrace());
  }
  return e.what();
}

}  // namespace engine::core
