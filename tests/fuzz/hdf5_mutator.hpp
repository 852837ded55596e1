// Valid HDF5 files with the wrong contents: a copy of a good file (a checkpoint, a run file)
// with groups, datasets and attributes removed, replaced by others of another type or shape,
// filled with other values, or added. The HDF5 library's own parser is not what is fuzzed
// here; the engine's readers of what the file holds are.
#pragma once

#include <string>

#include "tests/fuzz/fuzz_target.hpp"

namespace engine::fuzz {

// Copies `base` to `path`, then makes 1-4 changes chosen by `in`.
void mutate_hdf5(const std::string& base, const std::string& path, Bytes& in);

}  // namespace engine::fuzz
