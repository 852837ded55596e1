// A hyperparameter's search space (LUA_API.md, "A hyperparameter search"; Determined's
// hyperparameter types): a constant, a choice among values, an integer range, a uniform or a
// log-uniform range. Random search draws from it; grid search walks its grid values (a range
// needs `count` of them, evenly spaced, on a log scale for log).
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/io/hparam.hpp"

namespace engine::search {

struct Space {
  enum class Kind { kConst, kChoice, kInt, kUniform, kLog };
  Kind kind = Kind::kConst;
  std::vector<io::HParam> values;  // kConst: one; kChoice: the choices
  double lo = 0, hi = 0;           // kInt, kUniform; kLog: exponents' bounds are log_base
  double base = 10;                // kLog
  int64_t count = 0;               // grid points for a range (0: none given)

  // search.log(0.001, 1) -> "search.log(0.001, 1)"
  std::string describe() const;
  // Random search: one value (kInt inclusive of both ends; kLog uniform in the exponent).
  io::HParam sample(std::mt19937_64& random) const;
  // Grid search: the values, in order. A UsageError names `name` when a uniform or log range
  // has no count, or an integer range has neither a count nor at most 1000 integers.
  std::vector<io::HParam> grid(const std::string& name) const;
};

// A script's hyperparameters split in two: the ranges searched, by name, and the constants.
struct SearchSpace {
  std::map<std::string, Space> spaces;
  std::map<std::string, io::HParam> constants;

  // Every combination of the grid values, in name order with the last name varying fastest.
  std::vector<std::map<std::string, io::HParam>> grid() const;
  // One draw of every space (in name order), merged with the constants.
  std::map<std::string, io::HParam> sample(std::mt19937_64& random) const;
};

// The value as --set writes it: numbers with every digit needed to read them back exactly.
std::string hparam_text(const io::HParam& value);

}  // namespace engine::search
