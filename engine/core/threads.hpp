// Thread-count set-up: Debian's libtorch starts with one intra-op thread.
#pragma once

#include <string>

namespace engine::core {

// Number of cores this process may run on.
int available_cores();

// Sets libtorch's intra-op threads; 0 means all available cores. Returns the count set.
int configure_threads(int requested);

// Keeps libtorch ops called from the current thread (a data-loader worker) from starting an
// OpenMP team of their own, which would compete with the training threads for the cores.
void use_single_intraop_thread_here();

// The BLAS libraries mapped into this process (e.g. OpenBLAS through Debian's libblas.so.3
// alternative), read from /proc/self/maps; "unknown" when none can be seen.
std::string blas_in_use();

}  // namespace engine::core
