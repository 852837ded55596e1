// Ctrl-C, SIGTERM and SIGHUP during training: the first one asks the run to stop after the current
// step (it then saves a checkpoint and exits); a second one ends the process at once.
#pragma once

namespace engine::core {

// Installs the SIGINT, SIGTERM and SIGHUP handlers; call once before a training loop.
void install_interrupt_handlers();
// The signal received since installation, 0 when none.
int pending_interrupt();
// Forgets a received signal (tests) and restores the default handlers.
void reset_interrupt_handlers();

}  // namespace engine::core
