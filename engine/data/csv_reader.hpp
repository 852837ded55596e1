// A CSV reader (RFC 4180: quoted fields, doubled quotes, line breaks inside quotes, CRLF) that
// keeps each row's line number for error messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine::data {

struct CsvRow {
  int64_t line = 0;  // 1-based line where the row starts
  std::vector<std::string> fields;
};

// Every non-blank row of `text`; unquoted fields lose surrounding spaces and tabs. An
// unterminated quote throws DataError naming `what` and the line.
std::vector<CsvRow> parse_csv(const std::string& text, char delimiter, const std::string& what);

std::vector<CsvRow> read_csv(const std::string& path, char delimiter);

}  // namespace engine::data
