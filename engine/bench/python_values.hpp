// The operations of python_expression.cpp's evaluator on its values, with Python's semantics
// and Python's error words (py::Error carries them to the evaluator, which names the
// expression).
#pragma once

#include <stdexcept>
#include <string>

#include "engine/bench/python_expression.hpp"

namespace engine::bench::py {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

PyValue number(const std::string& text);  // a literal: 16 is an int, 1.5 and 1e3 floats
PyValue global(const std::string& name);  // a built-in function or module (len, re), else Error
// ==, !=, <, <=, >, >=, in, not in, is, is not
bool compare(const PyValue& left, const std::string& op, const PyValue& right);
// +, -, *, /, //, %, **
PyValue binary(const PyValue& left, const std::string& op, const PyValue& right);
PyValue attribute(const PyValue& object, const std::string& name);  // sys.executable
PyValue method(const PyValue& object, const std::string& name, const PyList& args);
PyValue call(const PyValue& function, const PyList& args);
PyValue index(const PyValue& object, const PyValue& at);
PyValue slice(const PyValue& object, const PyValue& from, const PyValue& to);  // None: an end
std::string type_name(const PyValue& value);                                   // 'str', 'int'

}  // namespace engine::bench::py
