// The built-in functions, modules (re, uuid, sys) and string methods of python_expression.hpp.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "engine/bench/python_values.hpp"
#include "engine/core/regex.hpp"

namespace engine::bench::py {
namespace {

const std::string& text_argument(const PyList& args, size_t i, const std::string& function) {
  if (i >= args.size()) throw Error(function + "() takes more arguments");
  const auto* s = std::get_if<std::string>(&args[i].value);
  if (!s) throw Error(function + "() argument must be str, not " + type_name(args[i]));
  return *s;
}

void arity(const PyList& args, size_t low, size_t high, const std::string& function) {
  if (args.size() < low || args.size() > high) {
    throw Error(function + "() takes " + std::to_string(low) +
                (high > low ? " to " + std::to_string(high) : "") + " arguments (" +
                std::to_string(args.size()) + " given)");
  }
}

core::Regex regex(const std::string& pattern) {
  try {
    return core::Regex(pattern);
  } catch (const core::RegexError& e) {
    throw Error("a regular expression that does not compile ('" + pattern + "': " + e.what() + ")");
  }
}

// re.sub's replacement with its \1 and \g<1> references filled in.
std::string expand(const std::string& replacement, const core::RegexMatch& m) {
  std::string out;
  for (size_t i = 0; i < replacement.size(); ++i) {
    const char c = replacement[i];
    if (c != '\\' || i + 1 == replacement.size()) {
      out += c;
      continue;
    }
    size_t group = 0, end = i + 1;
    if (std::isdigit(static_cast<unsigned char>(replacement[end]))) {
      group = static_cast<size_t>(replacement[end] - '0');
      ++end;
    } else if (replacement.compare(end, 2, "g<") == 0) {
      const auto close = replacement.find('>', end);
      if (close == std::string::npos) throw Error("a replacement with an unterminated \\g<");
      group = static_cast<size_t>(std::atoi(replacement.c_str() + end + 2));
      end = close + 1;
    } else {
      out += replacement[end] == 'n' ? '\n' : replacement[end] == 't' ? '\t' : replacement[end];
      i = end;
      continue;
    }
    if (group >= m.groups.size()) throw Error("invalid group reference " + std::to_string(group));
    out += m.groups[group];
    i = end - 1;
  }
  return out;
}

PyValue re_function(const std::string& name, const PyList& args) {
  if (name == "sub") {
    arity(args, 3, 4, "re.sub");
    const auto pattern = regex(text_argument(args, 0, "re.sub"));
    const std::string& replacement = text_argument(args, 1, "re.sub");
    const std::string& text = text_argument(args, 2, "re.sub");
    const auto* limit = args.size() > 3 ? std::get_if<int64_t>(&args[3].value) : nullptr;
    std::string out;
    size_t at = 0;
    int64_t count = 0;
    while (at <= text.size() && (!limit || *limit == 0 || count < *limit)) {
      const auto m = pattern.search(text.substr(at));
      if (!m) break;
      out += text.substr(at, m->position) + expand(replacement, *m);
      const size_t length = m->groups[0].size();
      at += m->position + length;
      ++count;
      if (length == 0) {  // an empty match moves on by one character
        if (at < text.size()) out += text[at];
        ++at;
      }
    }
    if (at < text.size()) out += text.substr(at);
    return out;
  }
  if (name == "match" || name == "search") {
    arity(args, 2, 2, "re." + name);
    const auto pattern = regex(text_argument(args, 0, "re." + name));
    const std::string& text = text_argument(args, 1, "re." + name);
    const auto m = name == "match" ? pattern.match_start(text) : pattern.search(text);
    if (!m) return PyValue();
    return PyMatch{m->groups};
  }
  throw Error("module 're' has no attribute '" + name + "' the engine knows");
}

// uuid.uuid4(): 32 random hex digits as 8-4-4-4-12, version 4.
std::string uuid4() {
  static std::mt19937_64 random{std::random_device{}()};
  std::string out;
  const char* const digits = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    int d = static_cast<int>(random() & 15);
    if (i == 12) d = 4;
    if (i == 16) d = 8 | (d & 3);
    out += digits[d];
  }
  return out;
}

std::string stripped(const std::string& s, const PyList& args, bool left, bool right) {
  const std::string chars = args.empty() || std::holds_alternative<std::monostate>(args[0].value)
                                ? std::string(" \t\n\r\v\f")
                                : text_argument(args, 0, "strip");
  size_t a = 0, b = s.size();
  while (left && a < b && chars.find(s[a]) != std::string::npos) ++a;
  while (right && b > a && chars.find(s[b - 1]) != std::string::npos) --b;
  return s.substr(a, b - a);
}

PyValue split(const std::string& s, const PyList& args) {
  arity(args, 0, 2, "split");
  const bool by_space = args.empty() || std::holds_alternative<std::monostate>(args[0].value);
  int64_t limit = -1;
  if (args.size() > 1) {
    const auto* n = std::get_if<int64_t>(&args[1].value);
    if (!n) throw Error("split(): maxsplit must be an integer");
    limit = *n;
  }
  PyList parts;
  if (by_space) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      if (i == s.size()) break;
      if (limit >= 0 && static_cast<int64_t>(parts.size()) == limit) {
        parts.push_back(stripped(s.substr(i), {}, false, true));
        break;
      }
      size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
    return parts;
  }
  const std::string& separator = text_argument(args, 0, "split");
  if (separator.empty()) throw Error("empty separator");
  size_t i = 0;
  while (limit < 0 || static_cast<int64_t>(parts.size()) < limit) {
    const auto at = s.find(separator, i);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(i, at - i));
    i = at + separator.size();
  }
  parts.push_back(s.substr(i));
  return parts;
}

PyValue string_method(const std::string& s, const std::string& name, const PyList& args) {
  if (name == "replace") {
    arity(args, 2, 3, "replace");
    const std::string& from = text_argument(args, 0, "replace");
    const std::string& to = text_argument(args, 1, "replace");
    const auto* limit = args.size() > 2 ? std::get_if<int64_t>(&args[2].value) : nullptr;
    std::string out;
    size_t i = 0;
    int64_t count = 0;
    while (i <= s.size() && (!limit || *limit < 0 || count < *limit)) {
      const auto at = from.empty() ? i : s.find(from, i);
      if (at == std::string::npos) break;
      out += s.substr(i, at - i) + to;
      ++count;
      if (from.empty()) {
        if (at < s.size()) out += s[at];
        i = at + 1;
      } else {
        i = at + from.size();
      }
    }
    if (i < s.size()) out += s.substr(i);
    return out;
  }
  if (name == "split") return split(s, args);
  if (name == "strip") return stripped(s, args, true, true);
  if (name == "lstrip") return stripped(s, args, true, false);
  if (name == "rstrip") return stripped(s, args, false, true);
  if (name == "lower" || name == "upper") {
    std::string out = s;
    for (auto& c : out) c = static_cast<char>(name == "lower" ? std::tolower(c) : std::toupper(c));
    return out;
  }
  if (name == "startswith" || name == "endswith") {
    const std::string& part = text_argument(args, 0, name);
    return part.size() <= s.size() &&
           (name == "startswith" ? s.compare(0, part.size(), part) == 0
                                 : s.compare(s.size() - part.size(), part.size(), part) == 0);
  }
  if (name == "join") {
    arity(args, 1, 1, "join");
    const auto* list = std::get_if<PyList>(&args[0].value);
    if (!list) throw Error("can only join a list");
    std::string out;
    for (size_t i = 0; i < list->size(); ++i) {
      const auto* item = std::get_if<std::string>(&(*list)[i].value);
      if (!item) throw Error("sequence item " + std::to_string(i) + ": expected str instance");
      out += (i ? s : "") + *item;
    }
    return out;
  }
  if (name == "find") return static_cast<int64_t>(s.find(text_argument(args, 0, "find")));
  throw Error("'str' object has no attribute '" + name + "' the engine knows");
}

PyValue to_int(const PyValue& v) {
  if (const auto* d = std::get_if<double>(&v.value)) {
    if (!std::isfinite(*d)) throw Error("cannot convert float " + python_str(v) + " to integer");
    return static_cast<int64_t>(std::trunc(*d));
  }
  if (const auto* s = std::get_if<std::string>(&v.value)) {
    const std::string t = stripped(*s, {}, true, true);
    char* end = nullptr;
    const long long n = std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || *end != '\0') {
      throw Error("invalid literal for int() with base 10: '" + *s + "'");
    }
    return static_cast<int64_t>(n);
  }
  if (const auto* b = std::get_if<bool>(&v.value)) return int64_t{*b ? 1 : 0};
  if (std::holds_alternative<int64_t>(v.value)) return v;
  throw Error("int() argument must be a string or a number, not '" + type_name(v) + "'");
}

PyValue to_float(const PyValue& v) {
  if (const auto* s = std::get_if<std::string>(&v.value)) {
    const std::string t = stripped(*s, {}, true, true);
    char* end = nullptr;
    const double d = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0') throw Error("could not convert string to float: '" + *s + "'");
    return d;
  }
  if (const auto* d = std::get_if<double>(&v.value)) return *d;
  return static_cast<double>(std::get<int64_t>(to_int(v).value));
}

}  // namespace

PyValue global(const std::string& name) {
  static const char* const kFunctions[] = {"len",  "int", "float", "str",
                                           "bool", "abs", "min",   "max"};
  for (const char* f : kFunctions) {
    if (name == f) return PyFunction{name};
  }
  if (name == "re" || name == "uuid" || name == "sys") return PyModule{name};
  throw Error("name '" + name + "' is not defined");
}

PyValue attribute(const PyValue& object, const std::string& name) {
  const auto* module = std::get_if<PyModule>(&object.value);
  if (module && module->name == "sys" && name == "executable") return std::string("python3");
  throw Error("'" + type_name(object) + "' object has no attribute '" + name +
              "' the engine knows");
}

PyValue method(const PyValue& object, const std::string& name, const PyList& args) {
  if (name == "__str__") return python_str(object);
  if (const auto* module = std::get_if<PyModule>(&object.value)) {
    if (module->name == "re") return re_function(name, args);
    if (module->name == "uuid" && name == "uuid4") return uuid4();
  }
  if (const auto* s = std::get_if<std::string>(&object.value)) return string_method(*s, name, args);
  if (const auto* m = std::get_if<PyMatch>(&object.value)) {
    if (name == "groups") return PyList(m->groups.begin() + 1, m->groups.end());
    if (name == "group") {
      const auto* i = args.empty() ? nullptr : std::get_if<int64_t>(&args[0].value);
      const size_t at = i ? static_cast<size_t>(*i) : 0;
      if (at >= m->groups.size()) throw Error("no such group");
      return m->groups[at];
    }
  }
  throw Error("'" + type_name(object) + "' object has no attribute '" + name +
              "' the engine knows");
}

PyValue call(const PyValue& function, const PyList& args) {
  const auto* f = std::get_if<PyFunction>(&function.value);
  if (!f) throw Error("'" + type_name(function) + "' object is not callable");
  const std::string& name = f->name;
  if (name == "min" || name == "max") {
    const PyList items = args.size() == 1 && std::holds_alternative<PyList>(args[0].value)
                             ? std::get<PyList>(args[0].value)
                             : args;
    if (items.empty()) throw Error(name + "() arg is an empty sequence");
    PyValue best = items[0];
    for (const auto& item : items) {
      if (compare(item, name == "min" ? "<" : ">", best)) best = item;
    }
    return best;
  }
  arity(args, name == "str" || name == "bool" ? 0 : 1, 1, name);
  if (name == "str") return args.empty() ? std::string() : python_str(args[0]);
  if (name == "bool") return !args.empty() && python_truth(args[0]);
  const PyValue& x = args[0];
  if (name == "len") {
    if (const auto* s = std::get_if<std::string>(&x.value)) return static_cast<int64_t>(s->size());
    if (const auto* l = std::get_if<PyList>(&x.value)) return static_cast<int64_t>(l->size());
    throw Error("object of type '" + type_name(x) + "' has no len()");
  }
  if (name == "int") return to_int(x);
  if (name == "float") return to_float(x);
  // abs
  if (const auto* d = std::get_if<double>(&x.value)) return std::fabs(*d);
  if (!std::holds_alternative<int64_t>(x.value) && !std::holds_alternative<bool>(x.value)) {
    throw Error("bad operand type for abs(): '" + type_name(x) + "'");
  }
  const int64_t n = std::get<int64_t>(to_int(x).value);
  return n < 0 ? -n : n;
}

}  // namespace engine::bench::py
