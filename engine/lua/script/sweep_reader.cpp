#include "engine/lua/script/sweep_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "engine/core/format.hpp"
#include "engine/core/regex.hpp"
#include "engine/lua/runtime/runtime.hpp"

namespace engine::lua {
namespace {

using bench::Getter;
using bench::Value;

const std::set<std::string> kSweepFields = {"kind",       "name",      "description",
                                            "parameters", "variables", "order",
                                            "extensions", "where",     "oom_family"};
const std::set<std::string> kExtensionFields = {"condition", "parameters", "cases", "enabled"};

// A Lua function kept in the registry for as long as a std::function holds it.
class FunctionRef {
 public:
  FunctionRef(Runtime& runtime, int index) : runtime_(runtime) {
    lua_State* L = runtime.state();
    lua_pushvalue(L, index);
    ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  ~FunctionRef() { luaL_unref(runtime_.state(), LUA_REGISTRYINDEX, ref_); }
  FunctionRef(const FunctionRef&) = delete;
  FunctionRef& operator=(const FunctionRef&) = delete;
  void push() const { lua_rawgeti(runtime_.state(), LUA_REGISTRYINDEX, ref_); }
  Runtime& runtime() const { return runtime_; }

 private:
  Runtime& runtime_;
  int ref_;
};

void push_value(lua_State* L, const Value& value) {
  if (const auto* b = std::get_if<bool>(&value)) {
    lua_pushboolean(L, *b);
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    lua_pushnumber(L, static_cast<lua_Number>(*i));
  } else if (const auto* d = std::get_if<double>(&value)) {
    lua_pushnumber(L, *d);
  } else {
    const auto& s = std::get<std::string>(value);
    lua_pushlstring(L, s.data(), s.size());
  }
}

// point.name inside a computed parameter or predicate: the Getter, called through a light
// userdata upvalue (valid only during the call that pushed the table).
int point_index(lua_State* L) {
  return guarded(L, [L] {
    const auto* get = static_cast<const Getter*>(lua_touserdata(L, lua_upvalueindex(1)));
    if (lua_type(L, 2) != LUA_TSTRING) {
      throw ArgumentError("a point's parameters are named by strings, got " + type_name(L, 2));
    }
    push_value(L, (*get)(lua_tostring(L, 2)));
    return 1;
  });
}

int point_newindex(lua_State* L) {
  return luaL_error(L, "the point is read-only: set parameters with `parameters` or `cases`");
}

// Pushes a table standing for the point: reading a field computes it as needed.
void push_point(lua_State* L, const Getter& get) {
  lua_newtable(L);
  lua_createtable(L, 0, 2);
  lua_pushlightuserdata(L, const_cast<Getter*>(&get));
  lua_pushcclosure(L, point_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, point_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
}

// A scalar at index, or a list of numbers (an input shape) as "1,28,28".
Value lua_value(lua_State* L, int index, const std::string& path, const std::string& where) {
  index = absolute_index(L, index);
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN:
      return lua_toboolean(L, index) != 0;
    case LUA_TNUMBER: {
      const double d = lua_tonumber(L, index);
      if (std::floor(d) == d && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
      return d;
    }
    case LUA_TSTRING:
      return std::string(lua_tostring(L, index));
    case LUA_TTABLE: {
      std::string text;
      const int n = static_cast<int>(lua_objlen(L, index));
      for (int i = 1; i <= n; ++i) {
        lua_rawgeti(L, index, i);
        const bool number = lua_type(L, -1) == LUA_TNUMBER;
        if (number) text += (i > 1 ? "," : "") + core::number_string(lua_tonumber(L, -1));
        lua_pop(L, 1);
        if (!number) break;
        if (i == n && n > 0) return text;
      }
      break;
    }
    default:
      break;
  }
  throw core::ScriptError(path + ": " + where + " must be a string, number, boolean or list " +
                          "of numbers, got " + type_name(L, index));
}

class Reader {
 public:
  Reader(Runtime& runtime, std::string path) : runtime_(runtime), path_(std::move(path)) {}

  Value value_at(int index, const std::string& where) const {
    return lua_value(runtime_.state(), index, path_, where);
  }

  // Calls item(i) with list[i] pushed, for i from 1 to #list (the list at index).
  template <class F>
  void each_item(int index, F&& item) const {
    lua_State* L = runtime_.state();
    index = absolute_index(L, index);
    const int n = static_cast<int>(lua_objlen(L, index));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, index, i);
      item(i);
      lua_pop(L, 1);
    }
  }

  // A parameter: a value, or a function of the point.
  bench::Param param_at(int index, const std::string& where) const {
    lua_State* L = runtime_.state();
    if (lua_type(L, index) != LUA_TFUNCTION) return bench::Param(value_at(index, where));
    bench::Param param;
    auto fn = std::make_shared<FunctionRef>(runtime_, index);
    param.compute = [fn, where, path = path_](const Getter& get) {
      lua_State* S = fn->runtime().state();
      StackGuard guard(S);
      fn->push();
      push_point(S, get);
      fn->runtime().call(1, 1);
      return lua_value(S, -1, path, where + " (the value its function returned)");
    };
    return param;
  }

  bench::Params params_at(int index, const std::string& where) const {
    lua_State* L = runtime_.state();
    bench::Params params;
    if (lua_isnil(L, index)) return params;
    check_table(index, where);
    index = absolute_index(L, index);
    lua_pushnil(L);
    while (lua_next(L, index) != 0) {
      const std::string key = string_key(-2, where);
      params[key] = param_at(-1, where + "." + key);
      lua_pop(L, 1);
    }
    return params;
  }

  std::function<bool(const Getter&)> predicate_at(int index) const {
    auto fn = std::make_shared<FunctionRef>(runtime_, index);
    return [fn](const Getter& get) {
      lua_State* S = fn->runtime().state();
      StackGuard guard(S);
      fn->push();
      push_point(S, get);
      fn->runtime().call(1, 1);
      return lua_toboolean(S, -1) != 0;
    };
  }

  bench::Test test_at(int index, const std::string& where) const {
    lua_State* L = runtime_.state();
    index = absolute_index(L, index);
    bench::Test test;
    if (lua_type(L, index) == LUA_TFUNCTION) {
      test.kind = bench::Test::Kind::kPredicate;
      auto fn = std::make_shared<FunctionRef>(runtime_, index);
      test.predicate = [fn](const Value& value, const Getter& get) {
        lua_State* S = fn->runtime().state();
        StackGuard guard(S);
        fn->push();
        push_value(S, value);
        push_point(S, get);
        fn->runtime().call(2, 1);
        return lua_toboolean(S, -1) != 0;
      };
      return test;
    }
    if (lua_istable(L, index)) {
      for (const auto& [field, kind] : {std::pair{"pattern", bench::Test::Kind::kPattern},
                                        {"match", bench::Test::Kind::kMatch}}) {
        raw_get(L, index, field);
        if (lua_isnil(L, -1)) {
          lua_pop(L, 1);
          continue;
        }
        if (lua_type(L, -1) != LUA_TSTRING) {
          throw core::ScriptError(path_ + ": " + where + "." + field + " must be a string");
        }
        test.kind = kind;
        test.pattern = lua_tostring(L, -1);
        lua_pop(L, 1);
        return test;
      }
      test.kind = bench::Test::Kind::kAnyOf;
      const int n = static_cast<int>(lua_objlen(L, index));
      if (n == 0) {
        throw core::ScriptError(path_ + ": " + where +
                                " must list the values it accepts ({'a', 'b'}), or be "
                                "{pattern = '...'}, {match = '...'} or a function");
      }
      each_item(index, [&](int i) {
        test.values.push_back(value_at(-1, where + "[" + std::to_string(i) + "]"));
      });
      return test;
    }
    test.values.push_back(value_at(index, where));
    return test;
  }

  bench::Extension extension_at(int index, const std::string& where) const {
    lua_State* L = runtime_.state();
    check_table(index, where);
    index = absolute_index(L, index);
    check_fields(index, where, kExtensionFields);
    bench::Extension extension;
    raw_get(L, index, "condition");
    if (lua_type(L, -1) == LUA_TFUNCTION) {
      extension.when = predicate_at(-1);
    } else if (!lua_isnil(L, -1)) {
      check_table(-1, where + ".condition");
      const int condition = lua_gettop(L);
      lua_pushnil(L);
      while (lua_next(L, condition) != 0) {
        const std::string key = string_key(-2, where + ".condition");
        extension.condition[key] = test_at(-1, where + ".condition." + key);
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
    raw_get(L, index, "parameters");
    extension.parameters = params_at(-1, where + ".parameters");
    lua_pop(L, 1);
    raw_get(L, index, "enabled");
    if (!lua_isnil(L, -1)) extension.parameters["enabled"] = param_at(-1, where + ".enabled");
    lua_pop(L, 1);
    raw_get(L, index, "cases");
    if (!lua_isnil(L, -1)) {
      check_table(-1, where + ".cases");
      each_item(-1, [&](int i) {
        extension.cases.push_back(params_at(-1, where + ".cases[" + std::to_string(i) + "]"));
      });
    }
    lua_pop(L, 1);
    return extension;
  }

  void check_table(int index, const std::string& where) const {
    lua_State* L = runtime_.state();
    if (!lua_istable(L, index)) {
      throw core::ScriptError(path_ + ": " + where + " must be a table, got " +
                              type_name(L, index));
    }
  }

  std::string string_key(int index, const std::string& where) const {
    lua_State* L = runtime_.state();
    if (lua_type(L, index) != LUA_TSTRING) {
      throw core::ScriptError(path_ + ": " + where + " must be keyed by names, found a " +
                              type_name(L, index) + " key");
    }
    return lua_tostring(L, index);
  }

  void check_fields(int index, const std::string& where, const std::set<std::string>& known) const {
    lua_State* L = runtime_.state();
    lua_pushnil(L);
    while (lua_next(L, index) != 0) {
      lua_pop(L, 1);
      const std::string key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?";
      if (!known.count(key)) {
        lua_pop(L, 1);
        throw core::ScriptError(
            path_ + ": unknown field '" + key + "' in " + where +
            " (known: " + core::join(std::vector<std::string>(known.begin(), known.end())) + ")");
      }
    }
  }

 private:
  Runtime& runtime_;
  std::string path_;
};

std::string file_stem(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Offsets where each line starts.
std::vector<size_t> line_starts(const std::string& text) {
  std::vector<size_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  return starts;
}

size_t line_of(const std::vector<size_t>& starts, size_t offset) {
  return static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), offset) -
                             starts.begin());
}

// Where the n-th (1-based) table of the list that follows `at` (an offset inside
// "extensions = {") opens, skipping strings and comments; npos when there are fewer.
size_t nth_item(const std::string& text, size_t at, size_t n) {
  int depth = 0;
  size_t seen = 0;
  for (size_t i = at; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      i = text.find('\n', i);
      if (i == std::string::npos) return i;
      continue;
    }
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (text[i] == '\\') ++i;
      }
      continue;
    }
    if (c == '{') {
      ++depth;
      if (depth == 2 && ++seen == n) return i;
    } else if (c == '}') {
      if (--depth == 0) return std::string::npos;
    }
  }
  return std::string::npos;
}

}  // namespace

namespace {

// kind (must be 'benchmark' when given), name (else the file's stem), description.
void read_sweep_header(lua_State* L, int sweep, const std::string& path, bench::SweepSpec& spec) {
  raw_get(L, sweep, "kind");
  if (!lua_isnil(L, -1) &&
      !(lua_type(L, -1) == LUA_TSTRING && std::string(lua_tostring(L, -1)) == "benchmark")) {
    throw core::ScriptError(path + ": kind must be 'benchmark' for engine bench");
  }
  lua_pop(L, 1);
  raw_get(L, sweep, "name");
  spec.name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : file_stem(path);
  lua_pop(L, 1);
  raw_get(L, sweep, "description");
  if (lua_type(L, -1) == LUA_TSTRING) {
    spec.description = lua_tostring(L, -1);
  } else if (!lua_isnil(L, -1)) {
    throw core::ScriptError(path + ": 'description' must be a string (got " + type_name(L, -1) +
                            ")");
  }
  lua_pop(L, 1);
}

// variables = {batch_size = {32, 64}, ...}
void read_sweep_variables(lua_State* L, int sweep, Reader& reader, bench::SweepSpec& spec) {
  raw_get(L, sweep, "variables");
  if (!lua_isnil(L, -1)) {
    reader.check_table(-1, "variables");
    const int variables = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, variables) != 0) {
      const std::string key = reader.string_key(-2, "variables");
      const std::string where = "variables." + key;
      reader.check_table(-1, where + " (a list of values)");
      auto& values = spec.variables[key];
      reader.each_item(-1, [&](int i) {
        values.push_back(reader.value_at(-1, where + "[" + std::to_string(i) + "]"));
      });
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

// field = {'a', 'b'}: a list of names (what: "a variable's name"), into `names`
void read_names(lua_State* L, int sweep, const std::string& path, Reader& reader, const char* field,
                const char* what, std::vector<std::string>& names) {
  raw_get(L, sweep, field);
  if (!lua_isnil(L, -1)) {
    reader.check_table(-1, field);
    reader.each_item(-1, [&](int i) {
      if (lua_type(L, -1) != LUA_TSTRING) {
        throw core::ScriptError(path + ": " + field + "[" + std::to_string(i) + "] must be " +
                                what + ", got " + type_name(L, -1));
      }
      names.push_back(lua_tostring(L, -1));
    });
  }
  lua_pop(L, 1);
}

// order = {'model', 'batch_size'}: the variables' loop order, outermost first;
// oom_family = {'model', 'phase'}: what a batch that ran out of memory rules out
void read_sweep_name_lists(lua_State* L, int sweep, const std::string& path, Reader& reader,
                           bench::SweepSpec& spec) {
  read_names(L, sweep, path, reader, "order", "a variable's name", spec.order);
  read_names(L, sweep, path, reader, "oom_family", "a parameter's name", spec.oom_family);
}

// extensions = {{condition = ..., parameters = ..., cases = ...}, ...}; where = function(point)
void read_sweep_extensions(lua_State* L, int sweep, const std::string& path, Reader& reader,
                           bench::SweepSpec& spec) {
  raw_get(L, sweep, "extensions");
  if (!lua_isnil(L, -1)) {
    reader.check_table(-1, "extensions");
    reader.each_item(-1, [&](int i) {
      spec.extensions.push_back(reader.extension_at(-1, "extensions[" + std::to_string(i) + "]"));
    });
  }
  lua_pop(L, 1);

  raw_get(L, sweep, "where");
  if (lua_type(L, -1) == LUA_TFUNCTION) {
    spec.where = reader.predicate_at(-1);
  } else if (!lua_isnil(L, -1)) {
    throw core::ScriptError(path + ": where must be a function of the point, got " +
                            type_name(L, -1));
  }
  lua_pop(L, 1);
}

}  // namespace

bench::SweepSpec read_sweep(Runtime& runtime, const std::string& path) {
  lua_State* L = runtime.state();
  StackGuard guard(L);
  runtime.run_file(path, 1);
  if (!lua_istable(L, -1)) {
    throw core::ScriptError(path + ": a benchmark sweep must return a table (got " +
                            type_name(L, -1) + ")");
  }
  const int sweep = lua_gettop(L);
  Reader reader(runtime, path);
  reader.check_fields(sweep, "the returned table", kSweepFields);
  bench::SweepSpec spec;
  read_sweep_header(L, sweep, path, spec);
  raw_get(L, sweep, "parameters");
  spec.parameters = reader.params_at(-1, "parameters");
  lua_pop(L, 1);
  read_sweep_variables(L, sweep, reader, spec);
  read_sweep_name_lists(L, sweep, path, reader, spec);
  read_sweep_extensions(L, sweep, path, reader, spec);
  const auto text = std::make_shared<std::string>(read_text(path));
  spec.locate = [path, text](const std::string& section, const std::string& key) {
    return locate_in_script(path, *text, section, key);
  };
  return spec;
}

bool looks_like_sweep(const std::string& script_text) {
  static const core::Regex kind(R"(kind\s*=\s*['"]benchmark['"])");
  return kind.search(script_text).has_value();
}

std::string locate_in_script(const std::string& path, const std::string& text,
                             const std::string& section, const std::string& key) {
  if (section.empty() || section[0] == '-') return {};  // flags (--set, --var)
  const auto starts = line_starts(text);
  std::string top = section;
  size_t item = 0;
  if (section.rfind("extensions[", 0) == 0) {
    top = "extensions";
    item = static_cast<size_t>(std::atoi(section.c_str() + 11));
  }
  const auto section_at = core::Regex("(^|[^A-Za-z0-9_.])" + top + "\\s*=").search(text);
  if (!section_at) return {};
  size_t from = section_at->position;
  if (item > 0) {
    from = nth_item(text, from, item);
    if (from == std::string::npos) return {};
  }
  size_t at = from;
  if (!key.empty()) {
    const std::string quoted = "['\"]" + key + "['\"]";
    const core::Regex key_re(
        section == "order" ? quoted : "(^|[^A-Za-z0-9_])" + key + "\\s*=[^=]|\\[" + quoted + "\\]");
    if (const auto key_at = key_re.search(text.substr(from))) at = from + key_at->position;
  }
  return " (" + std::filesystem::path(path).filename().string() + ":" +
         std::to_string(line_of(starts, at)) + ")";
}

}  // namespace engine::lua
