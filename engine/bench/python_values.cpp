#include "engine/bench/python_values.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace engine::bench {
namespace {

bool is_number(const PyValue& v) {
  return std::holds_alternative<bool>(v.value) || std::holds_alternative<int64_t>(v.value) ||
         std::holds_alternative<double>(v.value);
}
bool is_integer(const PyValue& v) {
  return std::holds_alternative<bool>(v.value) || std::holds_alternative<int64_t>(v.value);
}
int64_t as_integer(const PyValue& v) {
  if (const auto* b = std::get_if<bool>(&v.value)) return *b ? 1 : 0;
  return std::get<int64_t>(v.value);
}
double as_double(const PyValue& v) {
  if (const auto* d = std::get_if<double>(&v.value)) return *d;
  return static_cast<double>(as_integer(v));
}

// Python's repr of a float: the shortest digits that read back to it, in fixed notation from
// 1e-4 to 1e16 (100.0, 0.001), else scientific (1e-05, 1e+16).
std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  char text[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*e", precision - 1, x);
    if (std::strtod(text, nullptr) == x) break;
  }
  std::string s(text);
  const bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  const auto e = s.find('e');
  const int exponent = std::atoi(s.c_str() + e + 1);
  std::string digits = s.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (digits.size() <= static_cast<size_t>(exponent) + 1) {
      out = digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
            digits.substr(static_cast<size_t>(exponent) + 1);
    }
  } else {
    char exp_text[16];
    std::snprintf(exp_text, sizeof exp_text, "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + exp_text;
  }
  return (negative ? "-" : "") + out;
}

std::string repr(const PyValue& v) {
  if (const auto* s = std::get_if<std::string>(&v.value)) {
    std::string out = "'";
    for (char c : *s) {
      if (c == '\'' || c == '\\') out += '\\';
      out += c;
    }
    return out + "'";
  }
  return python_str(v);
}

// a op b, or an error where it passes 64 bits
int64_t checked(int64_t a, char op, int64_t b) {
  int64_t r = 0;
  const bool overflow = op == '+'   ? __builtin_add_overflow(a, b, &r)
                        : op == '-' ? __builtin_sub_overflow(a, b, &r)
                                    : __builtin_mul_overflow(a, b, &r);
  if (overflow) throw py::Error("an integer too large for the engine (beyond 64 bits)");
  return r;
}

// What a config's expression may make: a text or list this long is a mistake, not a value.
constexpr int64_t kMaxRepeated = int64_t{1} << 20;

PyValue repeat(const PyValue& sequence, int64_t times) {
  const auto* text = std::get_if<std::string>(&sequence.value);
  const int64_t length =
      static_cast<int64_t>(text ? text->size() : std::get<PyList>(sequence.value).size());
  if (times > 0 && length > 0 && times > kMaxRepeated / length) {
    throw py::Error("a " + std::string(text ? "string" : "list") + " of " + std::to_string(length) +
                    " repeated " + std::to_string(times) +
                    " times: more than the engine computes (2^20 items)");
  }
  if (const auto* s = text) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += *s;
    return out;
  }
  PyList out;
  for (int64_t i = 0; i < times; ++i) {
    const auto& list = std::get<PyList>(sequence.value);
    out.insert(out.end(), list.begin(), list.end());
  }
  return out;
}

PyValue integer_arithmetic(int64_t a, const std::string& op, int64_t b) {
  if (op == "+" || op == "-" || op == "*") return checked(a, op[0], b);
  if (op == "**") {
    if (b < 0) return std::pow(static_cast<double>(a), static_cast<double>(b));
    if (a == 0 || a == 1) return b == 0 ? 1 : a;
    if (a == -1) return b % 2 == 0 ? 1 : -1;
    int64_t result = 1;  // overflows within 63 steps
    for (int64_t i = 0; i < b; ++i) result = checked(result, '*', a);
    return result;
  }
  if (b == 0)
    throw py::Error(op == "/" ? "division by zero" : "integer division or modulo by zero");
  if (op == "/") return static_cast<double>(a) / static_cast<double>(b);
  int64_t quotient = a / b, remainder = a % b;
  if (remainder != 0 && ((remainder < 0) != (b < 0))) {  // Python floors
    quotient -= 1;
    remainder += b;
  }
  return op == "//" ? quotient : remainder;
}

PyValue float_arithmetic(double a, const std::string& op, double b) {
  if (op == "+") return a + b;
  if (op == "-") return a - b;
  if (op == "*") return a * b;
  if (op == "**") return std::pow(a, b);
  if (b == 0) throw py::Error("float division by zero");
  if (op == "/") return a / b;
  const double quotient = std::floor(a / b);
  return op == "//" ? quotient : a - quotient * b;
}

}  // namespace

std::string python_str(const PyValue& v) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "None";
        if constexpr (std::is_same_v<T, bool>) return x ? "True" : "False";
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(x);
        if constexpr (std::is_same_v<T, double>) return float_repr(x);
        if constexpr (std::is_same_v<T, std::string>) return x;
        if constexpr (std::is_same_v<T, PyList>) {
          std::string out = "[";
          for (size_t i = 0; i < x.size(); ++i) out += (i ? ", " : "") + repr(x[i]);
          return out + "]";
        }
        if constexpr (std::is_same_v<T, PyMatch>) return "<re.Match object>";
        if constexpr (std::is_same_v<T, PyModule>) return "<module '" + x.name + "'>";
        if constexpr (std::is_same_v<T, PyFunction>) return "<built-in function " + x.name + ">";
      },
      v.value);
}

bool python_truth(const PyValue& v) {
  if (std::holds_alternative<std::monostate>(v.value)) return false;
  if (is_number(v)) return as_double(v) != 0;
  if (const auto* s = std::get_if<std::string>(&v.value)) return !s->empty();
  if (const auto* l = std::get_if<PyList>(&v.value)) return !l->empty();
  return true;
}

namespace py {

std::string type_name(const PyValue& v) {
  static const char* const kNames[] = {"NoneType", "bool",   "int",
                                       "float",    "str",    "list",
                                       "re.Match", "module", "builtin_function_or_method"};
  return kNames[v.value.index()];
}

PyValue number(const std::string& text) {
  char* end = nullptr;
  if (text.find_first_of(".eE") == std::string::npos) {
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (*end == '\0' && errno == 0) return static_cast<int64_t>(v);
  } else {
    const double v = std::strtod(text.c_str(), &end);
    if (*end == '\0') return v;
  }
  throw Error("an invalid number '" + text + "'");
}

bool compare(const PyValue& l, const std::string& op, const PyValue& r) {
  if (op == "in" || op == "not in") {
    bool found = false;
    if (const auto* s = std::get_if<std::string>(&r.value)) {
      const auto* needle = std::get_if<std::string>(&l.value);
      if (!needle)
        throw Error("'in <string>' requires string as left operand, not " + type_name(l));
      found = s->find(*needle) != std::string::npos;
    } else if (const auto* list = std::get_if<PyList>(&r.value)) {
      for (const auto& item : *list) found = found || compare(l, "==", item);
    } else {
      throw Error("argument of type '" + type_name(r) + "' is not iterable");
    }
    return op == "in" ? found : !found;
  }
  if (op == "is" || op == "is not") {
    const bool same = l.value.index() == r.value.index() &&
                      (std::holds_alternative<std::monostate>(l.value) || compare(l, "==", r));
    return op == "is" ? same : !same;
  }
  if (op == "==" || op == "!=") {
    bool equal = false;
    if (is_number(l) && is_number(r)) {
      equal = is_integer(l) && is_integer(r) ? as_integer(l) == as_integer(r)
                                             : as_double(l) == as_double(r);
    } else if (l.value.index() != r.value.index()) {
      equal = false;
    } else if (const auto* a = std::get_if<PyList>(&l.value)) {
      const auto& b = std::get<PyList>(r.value);
      equal = a->size() == b.size();
      for (size_t i = 0; equal && i < a->size(); ++i) equal = compare((*a)[i], "==", b[i]);
    } else {
      equal = python_str(l) == python_str(r);
    }
    return op == "==" ? equal : !equal;
  }
  int order = 0;
  if (is_number(l) && is_number(r)) {
    const double a = as_double(l), b = as_double(r);
    order = a < b ? -1 : a > b ? 1 : 0;
  } else if (std::holds_alternative<std::string>(l.value) &&
             std::holds_alternative<std::string>(r.value)) {
    order = std::get<std::string>(l.value).compare(std::get<std::string>(r.value));
  } else {
    throw Error("'" + op + "' not supported between instances of '" + type_name(l) + "' and '" +
                type_name(r) + "'");
  }
  if (op == "<") return order < 0;
  if (op == "<=") return order <= 0;
  if (op == ">") return order > 0;
  return order >= 0;
}

PyValue binary(const PyValue& l, const std::string& op, const PyValue& r) {
  if (is_number(l) && is_number(r)) {
    if (is_integer(l) && is_integer(r)) return integer_arithmetic(as_integer(l), op, as_integer(r));
    return float_arithmetic(as_double(l), op, as_double(r));
  }
  const bool sequence_left =
      std::holds_alternative<std::string>(l.value) || std::holds_alternative<PyList>(l.value);
  if (op == "+" && sequence_left && l.value.index() == r.value.index()) {
    if (const auto* s = std::get_if<std::string>(&l.value))
      return *s + std::get<std::string>(r.value);
    PyList out = std::get<PyList>(l.value);
    const auto& more = std::get<PyList>(r.value);
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  if (op == "*" && sequence_left && is_integer(r)) return repeat(l, as_integer(r));
  if (op == "*" && is_integer(l) &&
      (std::holds_alternative<std::string>(r.value) || std::holds_alternative<PyList>(r.value))) {
    return repeat(r, as_integer(l));
  }
  if (op == "%" && std::holds_alternative<std::string>(l.value)) {
    throw Error("string formatting with % is not supported by the engine; use str() and +");
  }
  throw Error("unsupported operand type(s) for " + op + ": '" + type_name(l) + "' and '" +
              type_name(r) + "'");
}

PyValue index(const PyValue& object, const PyValue& at) {
  if (!is_integer(at)) throw Error("indices must be integers, not " + type_name(at));
  int64_t i = as_integer(at);
  if (const auto* s = std::get_if<std::string>(&object.value)) {
    const auto n = static_cast<int64_t>(s->size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw Error("string index out of range");
    return std::string(1, (*s)[static_cast<size_t>(i)]);
  }
  if (const auto* list = std::get_if<PyList>(&object.value)) {
    const auto n = static_cast<int64_t>(list->size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw Error("list index out of range");
    return (*list)[static_cast<size_t>(i)];
  }
  throw Error("'" + type_name(object) + "' object is not subscriptable");
}

PyValue slice(const PyValue& object, const PyValue& from, const PyValue& to) {
  const bool text = std::holds_alternative<std::string>(object.value);
  if (!text && !std::holds_alternative<PyList>(object.value)) {
    throw Error("'" + type_name(object) + "' object is not subscriptable");
  }
  const auto n = static_cast<int64_t>(text ? std::get<std::string>(object.value).size()
                                           : std::get<PyList>(object.value).size());
  auto bound = [&](const PyValue& v, int64_t otherwise) {
    if (std::holds_alternative<std::monostate>(v.value)) return otherwise;
    if (!is_integer(v)) throw Error("slice indices must be integers or None");
    int64_t i = as_integer(v);
    if (i < 0) i += n;
    return std::clamp<int64_t>(i, 0, n);
  };
  const int64_t a = bound(from, 0), b = std::max(a, bound(to, n));
  if (text) {
    return std::get<std::string>(object.value)
        .substr(static_cast<size_t>(a), static_cast<size_t>(b - a));
  }
  const auto& list = std::get<PyList>(object.value);
  return PyList(list.begin() + a, list.begin() + b);
}

}  // namespace py
}  // namespace engine::bench
