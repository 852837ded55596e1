// CSV out, as RFC 4180 has it: a field holding a comma, a quote or a line break is quoted, its
// quotes doubled.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace engine::io {

std::string csv_field(const std::string& text);
// One line: the fields, each through csv_field, joined by commas, then a newline.
void write_csv_row(std::ostream& out, const std::vector<std::string>& fields);

}  // namespace engine::io
