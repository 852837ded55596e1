// Version strings of the engine and the libraries it was built against.
#pragma once

#include <string>

namespace engine::core {

std::string engine_version();
std::string torch_version();

}  // namespace engine::core
