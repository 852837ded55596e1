// Regular expressions in ECMAScript syntax (std::regex's), compiled once.
//
// std::regex is a large template library: every file that searched with it compiled its
// matcher again (about 5 s of compile time each). This wrapper keeps <regex> in one file.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace engine::core {

// A pattern that is not a regular expression; what() says why (std::regex's words).
struct RegexError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RegexMatch {
  size_t position = 0;              // of the whole match in the text
  std::vector<std::string> groups;  // [0] the whole match, then each group ("" when unmatched)
};

class Regex {
 public:
  explicit Regex(const std::string& pattern);  // throws RegexError
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // The first match anywhere in the text (std::regex_search, Python's re.search).
  std::optional<RegexMatch> search(const std::string& text) const;
  // A match that begins at the text's first character (Python's re.match).
  std::optional<RegexMatch> match_start(const std::string& text) const;

  // The literal text as a pattern that matches exactly it.
  static std::string escape(const std::string& literal);

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace engine::core
