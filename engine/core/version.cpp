#include "engine/core/version.hpp"

#include <torch/version.h>

#include "engine_version_config.hpp"

namespace engine::core {

std::string engine_version() {
  return ENGINE_VERSION;
}

std::string torch_version() {
  return TORCH_VERSION;
}

}  // namespace engine::core
