// The Python expressions DLBS's JSON configs compute values with ($(...)$, which DLBS hands to
// Python's eval): literals, conditional expressions, `and`/`or`/`not`, comparisons (`in`,
// `is`, chained), arithmetic, subscripts and slices, `len`, `int`, `float`, `str`, `bool`,
// `abs`, `min`, `max`, the string methods configs use (`replace`, `split`, `strip`, `lstrip`,
// `rstrip`, `lower`, `upper`, `startswith`, `endswith`, `join`, `__str__`), `re.sub`,
// `re.match`, `re.search` (with `.group(n)`), `uuid.uuid4()` and `sys.executable`, with
// Python's semantics (a branch not taken is not evaluated). Anything else is an error naming
// what it met.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace engine::bench {

struct PyValue;
using PyList = std::vector<PyValue>;
// A regular expression's match: its groups, [0] the whole match ("" for a group that took no
// part).
struct PyMatch {
  std::vector<std::string> groups;
};
// A module (re, uuid, sys) or a built-in function (len, int, ...), by name.
struct PyModule {
  std::string name;
};
struct PyFunction {
  std::string name;
};

struct PyValue {
  std::variant<std::monostate, bool, int64_t, double, std::string, PyList, PyMatch, PyModule,
               PyFunction>
      value;

  PyValue() = default;
  template <class T>
  PyValue(T v) : value(std::move(v)) {}  // NOLINT: a value of any of the kinds above
  PyValue(const char* text) : value(std::string(text)) {}  // NOLINT
};

// Evaluates one expression; a core::UsageError says what could not be evaluated and why
// ("name 'foo' is not defined", "division by zero", "list index out of range").
PyValue evaluate_python(const std::string& expression);

// Python's str() of the value: True, 16, 0.1, 1e-05, 100.0, [1, 'a'], None.
std::string python_str(const PyValue& value);
// Python's truth of the value.
bool python_truth(const PyValue& value);

}  // namespace engine::bench
