#include "engine/report/cells.hpp"

namespace engine::report {

Cell cell_of(const io::HParam& value) {
  if (const auto* d = std::get_if<double>(&value)) return *d;
  if (const auto* b = std::get_if<bool>(&value)) return std::string(*b ? "true" : "false");
  return std::get<std::string>(value);
}

Cell cell_of(const io::h5::Attribute& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* d = std::get_if<double>(&value)) return *d;
  if (const auto* b = std::get_if<bool>(&value)) return std::string(*b ? "true" : "false");
  return std::get<std::string>(value);
}

}  // namespace engine::report
