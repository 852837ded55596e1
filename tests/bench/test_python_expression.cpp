// DLBS's $(...)$ expressions evaluated as Python evaluates them: each expected text below is
// what Python 3.11's str(eval(expression)) printed for it (the expressions DLBS's own configs
// compute with, and Python's corner cases: floor division, float repr, slices, chained
// comparisons, branches not taken).
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/bench/python_expression.hpp"
#include "engine/core/errors.hpp"

using namespace engine;

TEST_CASE("Python expressions evaluate as Python's eval does") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"'synthetic' if '' == '' else 'real'", "synthetic"},
      {"'synthetic' if '/data' == '' else 'real'", "real"},
      {"2*16 if 'gpu' == 'gpu' else 1 * 16", "32"},
      {"len('0,1,2,3'.replace(',', ' ').split())", "4"},
      {"len(re.sub('[:,]', ' ', '0,1:2').split())", "3"},
      {"'gpu' if 4 > 0 else 'cpu'", "gpu"},
      {"re.sub('[:]', ',', '0:1:2')", "0,1,2"},
      {"'localhost:4000'.split(':')[0] if ':' in 'localhost:4000' else ''", "localhost"},
      {"'localhost'.split(':')[1] if ':' in 'localhost' else ''", ""},
      {"'/a/b:$PYTHONPATH'.strip(' \\t:')", "/a/b:$PYTHONPATH"},
      {"':x:'.strip(' \\t:')", "x"},
      {"'true' if 'inference'=='inference' else 'false'", "true"},
      {"not True", "False"},
      {"True is False", "False"},
      {"None is None", "True"},
      {"1 < 2 <= 2", "True"},
      {"1 < 2 > 3", "False"},
      {"7 // 2", "3"},
      {"-7 // 2", "-4"},
      {"-7 % 3", "2"},
      {"7 / 2", "3.5"},
      {"2 ** 10", "1024"},
      {"0.1 + 0.2", "0.30000000000000004"},
      {"1e-05 * 1", "1e-05"},
      {"100.0", "100.0"},
      {"1e16", "1e+16"},
      {"123456789.0 * 10", "1234567890.0"},
      {"str(0.0001)", "0.0001"},
      {"int('  42 ')", "42"},
      {"float('1.5')", "1.5"},
      {"str(16) + '_' + str(True)", "16_True"},
      {"'a,b,,c'.split(',')", "['a', 'b', '', 'c']"},
      {"'a b  c'.split()", "['a', 'b', 'c']"},
      {"'a-b-c'.split('-', 1)", "['a', 'b-c']"},
      {"'AbC'.lower() + 'AbC'.upper()", "abcABC"},
      {"'resnet50'.startswith('resnet')", "True"},
      {"'x'.join(['a', 'b', 'c'])", "axbxc"},
      {"[1, 'a', 2.5]", "[1, 'a', 2.5]"},
      {"'abcdef'[1:3] + 'abcdef'[-2:] + 'abcdef'[:2]", "bcefab"},
      {"'abc'[-1]", "c"},
      {"min(3, 1, 2) + max([4, 9, 2])", "10"},
      {"abs(-3) + abs(-2.5)", "5.5"},
      {"'a' * 3", "aaa"},
      {"'1' in ['1', '2']", "True"},
      {"3 not in [1, 2]", "True"},
      {"bool('') or 'default'", "default"},
      {"'' and 'x'", ""},
      {"re.match('resnet([0-9]+)', 'resnet50').group(1)", "50"},
      {"re.match('vgg', 'resnet50') is None", "True"},
      {"'${x}'", "${x}"},
      {"str([1, 2])", "[1, 2]"},
      {"(1 + 2) * 3", "9"},
  };
  for (const auto& [expression, expected] : cases) {
    CAPTURE(expression);
    CHECK(bench::python_str(bench::evaluate_python(expression)) == expected);
  }
}

TEST_CASE("a Python expression that fails names itself and says why, as Python does") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"undefined_name", "name 'undefined_name' is not defined"},
      {"'abc'[5]", "string index out of range"},
      {"1 / 0", "division by zero"},
      {"len(5)", "object of type 'int' has no len()"},
      {"'%d' % 3", "string formatting with % is not supported"},
      {"open('x')", "name 'open' is not defined"},
      {"'a'.format(1)", "'str' object has no attribute 'format'"},
      {"1 +", "the expression ends too early"},
      {"'abc", "a string that does not end"},
      {"1 if True", "a conditional expression without 'else'"},
      {"'a' * 100000000000", "more than the engine computes (2^20 items)"},
      {"[0] * 10 ** 9", "more than the engine computes (2^20 items)"},
      {std::string(5000, '(') + "1" + std::string(5000, ')'), "more than 4096 tokens"},
  };
  for (const auto& [expression, why] : cases) {
    CAPTURE(expression);
    try {
      bench::evaluate_python(expression);
      FAIL("no error");
    } catch (const core::UsageError& e) {
      const std::string text = e.what();
      CHECK(text.find("cannot evaluate the Python expression '" + expression + "'") !=
            std::string::npos);
      CHECK(text.find(why) != std::string::npos);
    }
  }
}

TEST_CASE("a branch not taken is not evaluated, and uuid.uuid4() gives a fresh id") {
  CHECK(bench::python_str(bench::evaluate_python("'x' if True else 1 / 0")) == "x");
  CHECK(bench::python_str(bench::evaluate_python("True or undefined")) == "True");
  const std::string id =
      bench::python_str(bench::evaluate_python("uuid.uuid4().__str__().replace('-', '')"));
  CHECK(id.size() == 32);
  CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(id != bench::python_str(bench::evaluate_python("str(uuid.uuid4()).replace('-', '')")));
}
