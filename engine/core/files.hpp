// Whole-file reads for the data sources.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine::core {

// The whole file; IoError naming it when it cannot be opened or read.
std::vector<uint8_t> read_file(const std::string& path);

// Writes (replaces) the file; IoError naming it when it cannot be written.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace engine::core
