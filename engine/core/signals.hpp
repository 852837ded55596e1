// Names of the signals that end processes, for messages about a child that died, a run that
// was interrupted or a read that crashed.
#pragma once

#include <string>

namespace engine::core {

// "SIGSEGV", "SIGINT", ...; nullptr for a signal without a name here. Async-signal-safe (a
// handler may call it).
const char* signal_name(int signal);
// "SIGSEGV (segmentation fault)", "signal 40 (real-time signal 6)"
std::string signal_description(int signal);

}  // namespace engine::core
