// A file a process was killed in the middle of extending: HDF5 wrote the new end of file into
// the superblock, the file never reached it, and HDF5 1.10 then refuses to open it at all
// ("truncated file: eof = 120272, stored_eof = 120408"). The bytes it lacks are space the
// interrupted flush had not filled yet: a copy made as long as the superblock says opens, and
// holds every row of the flushes before (docs/results.md, "Files that survive crashes").
#pragma once

#include <cstdint>
#include <string>

namespace engine::io::h5 {

// The end of file the superblock of `path` records, 0 when it has none this reads (not HDF5,
// or a superblock at another offset than 0).
uint64_t recorded_end_of_file(const std::string& path);

// The file is shorter than its superblock says by as little as an interrupted flush leaves
// missing: at most 64 KiB, and an eighth of what it has. A file missing more was copied or
// downloaded in part, and is left to fail as it does.
bool cut_short(const std::string& path);

// "PATH is cut short: it has N of the M bytes its HDF5 superblock records (...)"
std::string cut_short_message(const std::string& path);

// The name of the whole copy of a cut-short file in `folder`, which records how many bytes of it
// were written (`written`): what lies past them is the zeros added, never data
// (written_bytes_of).
std::string whole_copy_name(const std::string& folder, uint64_t written);
// The bytes written of a whole copy by its name; 0 for any other file.
uint64_t written_bytes_of(const std::string& file_name);

// Makes `file` (a copy the caller owns) as long as its superblock says, with zeros, when it is
// cut_short(); leaves it as it is otherwise.
void lengthen_to_recorded_end(const std::string& file);

}  // namespace engine::io::h5
