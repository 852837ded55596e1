// Names of the signals that end processes, for messages about a child that died.
#pragma once

#include <string>

namespace engine::core {

// "SIGSEGV (segmentation fault)", "signal 40 (real-time signal 6)"
std::string signal_description(int signal);

}  // namespace engine::core
