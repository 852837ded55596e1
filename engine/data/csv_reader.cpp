#include "engine/data/csv_reader.hpp"

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"

namespace engine::data {
namespace {

std::string trimmed(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

}  // namespace

std::vector<CsvRow> parse_csv(const std::string& text, char delimiter, const std::string& what) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  bool quoted = false;      // inside quotes
  bool was_quoted = false;  // the current field had quotes: keep its spaces
  bool blank = true;        // nothing but line breaks seen in this row
  int64_t line = 1, quote_line = 0;
  row.line = 1;
  auto end_field = [&] {
    row.fields.push_back(was_quoted ? field : trimmed(field));
    field.clear();
    was_quoted = false;
  };
  auto end_row = [&] {
    end_field();
    if (!blank) rows.push_back(std::move(row));
    row = CsvRow{};
    row.line = line;
    blank = true;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = was_quoted = true;
      blank = false;
      quote_line = line;
      field = trimmed(field);  // spaces before an opening quote do not count
    } else if (c == delimiter) {
      blank = false;
      end_field();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++line;
      end_row();
    } else {
      if (c != ' ' && c != '\t') blank = false;
      field += c;
    }
  }
  if (quoted) {
    throw core::DataError(what + ":" + std::to_string(quote_line) +
                          ": a quoted field is never closed");
  }
  end_row();
  return rows;
}

std::vector<CsvRow> read_csv(const std::string& path, char delimiter) {
  const auto bytes = core::read_file(path);
  std::string text(bytes.begin(), bytes.end());
  // a UTF-8 byte order mark (spreadsheet programs write one) is not part of the first name
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  return parse_csv(text, delimiter, path);
}

}  // namespace engine::data
