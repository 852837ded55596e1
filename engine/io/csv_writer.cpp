#include "engine/io/csv_writer.hpp"

namespace engine::io {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void write_csv_row(std::ostream& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_field(fields[i]);
  out << '\n';
}

}  // namespace engine::io
