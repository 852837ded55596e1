// Whole-file reads for the data sources, making a file's folder, and removing a folder tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine::core {

// The whole file; IoError naming it when it cannot be opened or read, DataError when it is a
// folder.
std::vector<uint8_t> read_file(const std::string& path);

// Writes (replaces) the file; IoError naming it when it cannot be written.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes);

// Creates the folder that `path` goes in (with its parents) and returns `path`: for a file's
// lock taken in a constructor's initializer, before the file itself is made. IoError naming the
// folder when it cannot be made.
std::string with_folder_made(const std::string& path);

// Removes the file or folder and everything under it (symbolic links themselves, not what they
// point to); nothing to do when it does not exist. IoError naming what could not be removed.
// Instead of std::filesystem::remove_all: PyTorch's libtorch 2.x builds carry a copy of it
// that the dynamic linker picks before libstdc++'s, and that copy crashes when called.
void remove_tree(const std::string& path);

// remove_tree for destructors and clean-ups: false instead of an exception.
bool remove_tree_quietly(const std::string& path) noexcept;

}  // namespace engine::core
