// Reads a benchmark sweep script (LUA_API.md, "A benchmark sweep": the table it returns, with
// kind = 'benchmark') into a bench::SweepSpec of plain values. Lua functions in it (computed
// parameters, predicates) become std::functions that call back into this runtime, which must
// outlive the spec; they see the point as a read-only table.
#pragma once

#include <string>

#include "engine/bench/sweep.hpp"

namespace engine::lua {

class Runtime;

// Runs the script. Throws ScriptError naming the script and the field for a script that does
// not return a table, an unknown field, or a value of the wrong kind.
bench::SweepSpec read_sweep(Runtime& runtime, const std::string& path);

// Whether a script returns a benchmark sweep (its table's kind is 'benchmark'), without
// running it: a look at its text for kind = 'benchmark'.
bool looks_like_sweep(const std::string& script_text);

// " (cnn.lua:14)": where `key` is written in `section` of a sweep script's text, or "".
std::string locate_in_script(const std::string& path, const std::string& text,
                             const std::string& section, const std::string& key);

}  // namespace engine::lua
