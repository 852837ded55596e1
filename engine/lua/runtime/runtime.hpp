// The Lua runtime: one lua_State per Runtime, the exception boundary between C++ and Lua,
// and the helpers every binding file shares (type registration, checked arguments, option
// tables). The only place, with the wrap_*.cpp files, that includes lua.h.
#pragma once

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include <initializer_list>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/errors.hpp"
#include "engine/io/hparam.hpp"
#include "engine/lua/runtime/runtime_options.hpp"
#include "engine/lua/runtime/script_random.hpp"

namespace engine::lua {

class Runtime {
 public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  lua_State* state() const { return L_; }
  const RuntimeOptions& options() const { return options_; }
  // The generator behind the scripts' math.random (seeded 0 until a run seeds it).
  ScriptRandom& random() { return random_; }
  static Runtime& from(lua_State* L);
  // Whether L's Runtime is closing its state (or L has none): finalizers then let go of
  // everything rather than keep objects C++ still holds.
  static bool closing(lua_State* L) noexcept;

  // Loads a file as a chunk named after its path and runs it; leaves nresults values on the
  // stack (LUA_MULTRET: all). Throws ScriptError (syntax errors, runtime errors with traceback).
  int run_file(const std::string& path, int nresults);
  // Runs a string as a chunk; used for embedded Lua sources.
  int run_string(const std::string& code, const std::string& chunk_name, int nresults);
  // lua_pcall with a traceback handler. The function and its nargs arguments are on the
  // stack; on error they are popped and a ScriptError is thrown.
  void call(int nargs, int nresults);
  // os.exit(code) in `engine run`: the next error call() sees ends the script (ScriptExit).
  void request_exit(int code) { exit_request_ = code; }

 private:
  friend std::string current_exception_message(lua_State* L);
  lua_State* L_;
  RuntimeOptions options_;
  ScriptRandom random_;
  int raised_exit_code_ = 0;         // exit code of the last engine error turned into a Lua error
  std::optional<int> exit_request_;  // what os.exit asked for (engine run)
  bool closing_ = false;
};

// Turns the exception in flight into the text a Lua error should carry, and remembers the
// exit code of an engine error so that Runtime::call can restore it.
std::string current_exception_message(lua_State* L);

// The exception boundary: runs f (which returns the number of Lua results), converts any C++
// exception into a Lua error raised after every C++ object of this frame has been destroyed.
template <class F>
int guarded(lua_State* L, F&& f) {
  {
    std::string message;
    try {
      return f();
    } catch (...) {
      message = current_exception_message(L);
    }
    luaL_where(L, 1);  // "file.lua:12: " of the Lua line that called into C++
    lua_pushlstring(L, message.data(), message.size());
    lua_concat(L, 2);
  }
  return lua_error(L);
}

// Thrown inside guarded() for bad arguments; becomes a Lua error with this message.
class ArgumentError : public core::ScriptError {
 public:
  using core::ScriptError::ScriptError;
};

// Restores the Lua stack height when a scope ends, however it ends.
class StackGuard {
 public:
  explicit StackGuard(lua_State* L) : L_(L), top_(lua_gettop(L)) {}
  ~StackGuard() { lua_settop(L_, top_); }
  StackGuard(const StackGuard&) = delete;
  StackGuard& operator=(const StackGuard&) = delete;

 private:
  lua_State* L_;
  int top_;
};

// Pushes the registry's table at key (an address of the caller's), made on first use; mode is
// its __mode ("k", "v") or nullptr for a table that holds its entries strongly.
void push_registry_table(lua_State* L, const void* key, const char* mode);

inline int absolute_index(lua_State* L, int index) {
  return (index > 0 || index <= LUA_REGISTRYINDEX) ? index : lua_gettop(L) + index + 1;
}

// Pushes table[key] without metamethods: reading a script's table this way cannot raise a Lua
// error (a longjmp) across live C++ objects.
inline void raw_get(lua_State* L, int table, const char* key) {
  table = absolute_index(L, table);
  lua_pushstring(L, key);
  lua_rawget(L, table);
}

// ---- userdata types -------------------------------------------------------------------------
// A type exposed to Lua lives inside its userdata (placement new) after a tag word; __gc runs
// its destructor. Each type names itself with a static `kTypeName` member, and the address of
// that name is the tag. It must be an array (`static constexpr char kTypeName[]`), one object
// for the whole program: a pointer to a string literal may point to a different copy of the
// literal in each file (AddressSanitizer builds keep them apart), and the tags would differ.
// Checking the tag (and the userdata's size) identifies the type without touching the metatable or
// the registry: this runs several times per tensor operation. Only C code can write a userdata's
// bytes, so a tag cannot be forged from Lua.

// The tag left behind by __gc: the object is destroyed, the userdata may still be reachable
// (from another finalizer, or through an explicit __gc call), and using it must fail cleanly.
inline constexpr char kReleasedTag[] = "released";
// The tag of a tensor that a scope released (torch.scope, or the forward of a Lua module that
// C++ called), so that using it says how it went.
inline constexpr char kScopeReleasedTag[] = "released by its scope";

template <class T>
struct Tagged {
  static_assert(alignof(T) <= alignof(void*), "userdata payloads are pointer-aligned");
  const char* tag;
  T object;
};

// Pushes the metatable of a type defined with define_type. The registry holds it under the
// address of the type's name as well as under the name: a light userdata key needs no string
// hashing.
inline void push_metatable(lua_State* L, const char* type_name) {
  lua_pushlightuserdata(L, const_cast<char*>(type_name));
  lua_rawget(L, LUA_REGISTRYINDEX);
}

// The tagged userdata at index when it holds a T (live or released), else nullptr.
template <class T>
Tagged<T>* test_tagged(lua_State* L, int index) {
  // lua_touserdata is non-null only for (light) userdata; a light userdata has length 0.
  // lua_objlen must not see a number: it would turn it into a string in place.
  auto* box = static_cast<Tagged<T>*>(lua_touserdata(L, index));
  if (!box || lua_objlen(L, index) != sizeof(Tagged<T>)) return nullptr;
  return box->tag == T::kTypeName || box->tag == kReleasedTag || box->tag == kScopeReleasedTag
             ? box
             : nullptr;
}

template <class T>
int gc_userdata(lua_State* L) {
  auto* box = test_tagged<T>(L, 1);
  if (box && box->tag == T::kTypeName) {
    box->tag = kReleasedTag;
    box->object.~T();
  }
  return 0;
}

// A function of the Lua surface as its table declares it: its Lua name and C function and, where
// they are not the defaults, the PyTorch name it stands for ("" = the same name in its library's
// PyTorch namespace: nn.Linear is torch.nn.Linear) and what differs from PyTorch's ("" =
// nothing beyond the Lua conventions). A table of them ends with {nullptr, nullptr}; the
// coverage page and the missing-name errors read the same tables the libraries are built from
// (engine/lua/surface), so a table must live as long as the program (static; set_bindings keeps
// pointers to its rows).
struct Binding {
  const char* name;
  lua_CFunction function;
  const char* pytorch = "";
  const char* note = "";
};
// Sets each binding's function into the table on top of the stack, and records the binding so
// that find_binding can say, for a function a library holds, what its table declared.
void set_bindings(lua_State* L, const Binding* bindings);
// The binding set_bindings registered for `function` under `name` (the first one for the
// function when no name matches: an alias), or nullptr.
const Binding* find_binding(lua_CFunction function, const std::string& name);
// library[name] = a new table of the bindings of `tables` (nn.F, nn.init, nn.utils).
void add_bindings_table(lua_State* L, int library, const char* name,
                        std::initializer_list<const Binding*> tables);

// Creates a type's metatable (once) with methods and metamethods; `name` must be the type's
// kTypeName (its address is a registry key, see push_metatable). Methods are looked up through
// __index; with `index` given, __index is that function with the methods table as upvalue 1
// (for types that also answer x[i]). The methods table is also kept as field __methods.
void define_type(lua_State* L, const char* name, const Binding* methods, const luaL_Reg* meta,
                 lua_CFunction gc, lua_CFunction index = nullptr);
// Adds methods and metamethods (either may be nullptr) to a type define_type made, for
// libraries whose bindings are spread over several files.
void extend_type(lua_State* L, const char* name, const Binding* methods, const luaL_Reg* meta);

template <class T, class... Args>
T& push_new(lua_State* L, Args&&... args) {
  auto* box = static_cast<Tagged<T>*>(lua_newuserdata(L, sizeof(Tagged<T>)));
  box->tag = nullptr;  // not a T until constructed: a throwing constructor leaves no T behind
  T* object = new (&box->object) T(std::forward<Args>(args)...);
  box->tag = T::kTypeName;
  push_metatable(L, T::kTypeName);
  lua_setmetatable(L, -2);
  return *object;
}

// The live T at index, else nullptr.
template <class T>
T* test(lua_State* L, int index) {
  auto* box = test_tagged<T>(L, index);
  return box && box->tag == T::kTypeName ? &box->object : nullptr;
}

// The Lua type name of the value at index, for messages ("number", "Tensor", "table").
std::string type_name(lua_State* L, int index);

// What the value at index is, for "expected X, got Y" messages: its type name, or that it is a
// T already released by __gc.
template <class T>
std::string found_instead(lua_State* L, int index) {
  const auto* box = test_tagged<T>(L, index);
  if (!box) return type_name(L, index);
  if (box->tag == kScopeReleasedTag) {
    return std::string("a ") + T::kTypeName +
           " that was released when the torch.scope or the Lua module forward it was made in "
           "ended (return it, store it in a module field, or keep it with x:keep())";
  }
  return std::string("a ") + T::kTypeName + " that was already released";
}

template <class T>
T& check(lua_State* L, int index, const char* function) {
  if (T* p = test<T>(L, index)) return *p;
  throw ArgumentError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                      "' (" + T::kTypeName + " expected, got " + found_instead<T>(L, index) + ")");
}

double check_number(lua_State* L, int index, const char* function);
int64_t check_integer(lua_State* L, int index, const char* function);
// The argument at index, or `fallback` when it is nil or absent (PyTorch's default arguments).
inline double number_or(lua_State* L, int index, double fallback, const char* function) {
  return lua_isnoneornil(L, index) ? fallback : check_number(L, index, function);
}
inline int64_t integer_or(lua_State* L, int index, int64_t fallback, const char* function) {
  return lua_isnoneornil(L, index) ? fallback : check_integer(L, index, function);
}
std::string check_string(lua_State* L, int index, const char* function);
// Pushes a hyperparameter's value: a number, a boolean or a string.
inline void push_hparam(lua_State* L, const io::HParam& value) {
  if (const auto* number = std::get_if<double>(&value)) {
    lua_pushnumber(L, *number);
  } else if (const auto* flag = std::get_if<bool>(&value)) {
    lua_pushboolean(L, *flag);
  } else {
    lua_pushstring(L, std::get<std::string>(value).c_str());
  }
}

// ---- option tables -------------------------------------------------------------------------
// Reads `{key = value}` tables; construction fails on keys outside `accepted`, naming them.
class Options {
 public:
  Options(lua_State* L, int index, std::string function, std::vector<const char*> accepted);
  bool has(const char* key) const;
  double number(const char* key, double fallback) const;
  int64_t integer(const char* key, int64_t fallback) const;
  bool boolean(const char* key, bool fallback) const;
  std::string string(const char* key, const std::string& fallback) const;
  // A number or a list of numbers; a single number is repeated `count` times.
  std::vector<int64_t> integers(const char* key, std::vector<int64_t> fallback, size_t count) const;
  std::vector<double> numbers(const char* key, std::vector<double> fallback) const;
  // A string or a list of strings (numbers are taken as their decimal text); nothing if absent.
  std::optional<std::vector<std::string>> strings(const char* key) const;
  // Pushes the field (nil when absent); the caller pops it.
  void push_field(const char* key) const { push(key); }

 private:
  // Pushes the field (nil when absent or when there is no table).
  void push(const char* key) const;
  lua_State* L_;
  int index_;  // 0 when no table was given
  std::string function_;
};

// Reads a Lua list of numbers (or a single number) at index.
std::vector<double> number_list(lua_State* L, int index, const std::string& what);

// Reads a Lua list of whole numbers (or a single one) at index; anything else (0.5, NaN, 1e300)
// is an error naming `what`.
std::vector<int64_t> integer_list(lua_State* L, int index, const std::string& what);

// Sizes given as one number or a list (kernel sizes, strides...), a single number repeated to
// `count` values; any other length is an error naming `what`.
std::vector<int64_t> size_list(lua_State* L, int index, const std::string& what, size_t count);

// require(name) from C, result dropped: a library whose functions return values of another
// library's types (tensors from 'data') loads that library first, so the values have methods.
void require_library(lua_State* L, const char* name);

// An embedded file of engine/lua (nn.lua, surface/pytorch_names.txt), by file name; nullptr
// when unknown.
const char* embedded_lua(const std::string& name);

}  // namespace engine::lua
