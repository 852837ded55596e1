#include "engine/core/regex.hpp"

#include <regex>

namespace engine::core {

struct Regex::Compiled {
  std::regex expression;
};

namespace {

std::optional<RegexMatch> found(const std::string& text, const std::regex& expression,
                                std::regex_constants::match_flag_type flags) {
  std::smatch match;
  if (!std::regex_search(text, match, expression, flags)) return std::nullopt;
  RegexMatch result;
  result.position = static_cast<size_t>(match.position(0));
  for (const auto& group : match) result.groups.push_back(group.matched ? group.str() : "");
  return result;
}

}  // namespace

Regex::Regex(const std::string& pattern) {
  try {
    compiled_ = std::make_unique<Compiled>(Compiled{std::regex(pattern, std::regex::ECMAScript)});
  } catch (const std::regex_error& e) {
    throw RegexError(e.what());
  }
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

std::optional<RegexMatch> Regex::search(const std::string& text) const {
  return found(text, compiled_->expression, std::regex_constants::match_default);
}

std::optional<RegexMatch> Regex::match_start(const std::string& text) const {
  return found(text, compiled_->expression, std::regex_constants::match_continuous);
}

std::string Regex::escape(const std::string& literal) {
  static const std::string kSpecial = R"(.^$|()[]{}*+?\)";
  std::string pattern;
  for (const char c : literal) {
    if (kSpecial.find(c) != std::string::npos) pattern += '\\';
    pattern += c;
  }
  return pattern;
}

}  // namespace engine::core
