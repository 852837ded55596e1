// core::Regex: std::regex's ECMAScript syntax behind one compiled file.
#include <doctest/doctest.h>

#include "engine/core/regex.hpp"

using engine::core::Regex;

TEST_CASE("regex: search finds the first match, its position and its groups") {
  const Regex pattern(R"((^|[^A-Za-z0-9_])lr\s*=)");
  const auto found = pattern.search("trainer = {epochs = 2, lr = 0.1}");
  REQUIRE(found);
  CHECK(found->position == 22);
  REQUIRE(found->groups.size() == 2);
  CHECK(found->groups[0] == " lr =");
  CHECK(found->groups[1] == " ");
  CHECK_FALSE(pattern.search("trainer = {epochs = 2, base_lr = 0.1}"));
}

TEST_CASE("regex: match_start matches only from the first character, as re.match") {
  const Regex pattern("(resnet|vgg)(\\d+)?");
  const auto found = pattern.match_start("resnet50_v1");
  REQUIRE(found);
  CHECK(found->position == 0);
  CHECK(found->groups == std::vector<std::string>{"resnet50", "resnet", "50"});
  const auto no_digits = pattern.match_start("vgg_a");
  REQUIRE(no_digits);
  CHECK(no_digits->groups[2].empty());  // an unmatched group is empty
  CHECK_FALSE(pattern.match_start("my_resnet50"));
  CHECK(pattern.search("my_resnet50"));
}

TEST_CASE("regex: escape makes any text a literal pattern") {
  const std::string text = "a.b*c+(d)[e]{f}^$|?\\g";
  const Regex literal(Regex::escape(text));
  const auto found = literal.search("x" + text + "y");
  REQUIRE(found);
  CHECK(found->position == 1);
  CHECK(found->groups[0] == text);
  CHECK_FALSE(Regex(Regex::escape("a.b")).search("axb"));
}

TEST_CASE("regex: a malformed pattern is a RegexError, and a moved pattern still matches") {
  CHECK_THROWS_AS(Regex("(unclosed"), engine::core::RegexError);
  CHECK_THROWS_AS(Regex("[z-a]"), engine::core::RegexError);
  Regex first("b+");
  Regex second = std::move(first);
  CHECK(second.search("abbbc")->groups[0] == "bbb");
}
