#include "engine/lua/runtime/runtime.hpp"

#include <c10/util/Exception.h>

#include <cstring>
#include <new>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "engine/core/format.hpp"
#include "engine/core/memory.hpp"
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/runtime/os_exit.hpp"
#include "engine/lua/runtime/tensor_memory.hpp"
#include "engine/lua/surface/missing_names.hpp"

extern "C" {
#include <luajit.h>
}

namespace engine::lua {
namespace {

const char kRuntimeKey = 0;  // its address is the registry key of the owning Runtime

// Module files that returned nothing (their require gave `true`), noted by the require that
// watch_module_returns installs; a registry table under this key's address.
const char kModulesWithoutReturn = 0;

// `require` as Lua's, noting each module file it ran that returned nothing; a module found
// nowhere is an error at the script's line (level 2), naming the folders searched, where Lua's
// put this wrapper's line first and the script's last, after a score of file names.
const char* const kWatchModuleReturns = R"(
local without_return = ...
local require, loaded, preload, searchpath = require, package.loaded, package.preload,
  package.searchpath
local function folders(path)
  local seen, list = {}, {}
  for template in path:gmatch('[^;]+') do
    local folder = template:match('^(.*)/%?') or template:match('^(.-)%?') or template
    if folder == '' then folder = '.' end
    if not seen[folder] then seen[folder] = true; list[#list + 1] = folder end
  end
  return table.concat(list, ', ')
end
_G.require = function(name)
  local fresh = loaded[name] == nil
  if fresh and type(name) == 'string' and preload[name] == nil and
     not searchpath(name, package.path) and not searchpath(name, package.cpath) then
    error(string.format("module '%s' not found: no %s.lua in %s", name,
                        name:gsub('%.', '/'), folders(package.path)), 2)
  end
  local value = require(name)
  if fresh and value == true and type(name) == 'string' then
    local file = searchpath(name, package.path)
    if file then without_return[#without_return + 1] = file end
  end
  return value
end
)";

void watch_module_returns(lua_State* L) {
  if (luaL_loadbuffer(L, kWatchModuleReturns, std::strlen(kWatchModuleReturns), "=engine") != 0)
    throw std::logic_error(lua_tostring(L, -1));
  lua_newtable(L);
  lua_pushlightuserdata(L, const_cast<char*>(&kModulesWithoutReturn));
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_call(L, 1, 0);
}

// "attempt to call a boolean value" after a module file returned nothing: the message with a
// hint that names the file (a module must end with `return M`).
std::string with_return_hint(lua_State* L, const char* message) {
  std::string text = message;
  if (text.find("a boolean value") == std::string::npos) return text;
  lua_pushlightuserdata(L, const_cast<char*>(&kModulesWithoutReturn));
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (lua_istable(L, -1)) {
    const size_t n = lua_objlen(L, -1);
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, static_cast<int>(i));
      text += std::string(i == 1 ? " (" : "; ") + lua_tostring(L, -1) + " returned nothing";
      lua_pop(L, 1);
    }
    if (n > 0) text += ", so require gave true: a module file must end with `return M`)";
  }
  lua_pop(L, 1);
  return text;
}

// [object] -> what its __tostring returns (nil without one); run in protected mode below
int call_tostring(lua_State* L) {
  if (!luaL_callmeta(L, 1, "__tostring")) lua_pushnil(L);
  return 1;
}

int traceback_handler(lua_State* L) {
  const char* message = lua_tostring(L, 1);
  if (!message) {
    // protected: an error inside __tostring would call this handler again, and again, until
    // the stack ran out ("stack overflow" instead of the script's error)
    lua_pushcfunction(L, call_tostring);
    lua_pushvalue(L, 1);
    const bool ok = lua_pcall(L, 1, 1, 0) == 0;
    if (ok && lua_isstring(L, -1)) {
      message = lua_tostring(L, -1);
    } else if (!ok && lua_isstring(L, -1)) {
      message = lua_pushfstring(L, "(error object is a %s value; its __tostring failed: %s)",
                                luaL_typename(L, 1), lua_tostring(L, -1));
    } else {
      message = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
  }
  // a traceback needs stack, and after a stack overflow there is none left: the message (with
  // its file and line) is all there is to say
  if (std::strstr(message, "stack overflow")) {
    lua_pushfstring(L, "%s (a function that calls itself without end?)", message);
    return 1;
  }
  luaL_traceback(L, L, with_return_hint(L, message).c_str(), 1);
  return 1;
}

// Splits "message\nstack traceback:\n..." into its two parts.
core::ScriptError script_error(const std::string& text, int exit_code) {
  const std::string marker = "\nstack traceback:";
  const auto pos = text.find(marker);
  const int code = exit_code > 0 ? exit_code : 3;
  if (pos == std::string::npos) return core::ScriptError(text, {}, code);
  return core::ScriptError(text.substr(0, pos), text.substr(pos + 1), code);
}

std::string package_path(const RuntimeOptions& options) {
  std::string path;
  for (const auto& dir : options.package_dirs) {
    path += dir + "/?.lua;" + dir + "/?/init.lua;";
  }
  return path;
}

}  // namespace

Runtime::Runtime(RuntimeOptions options) : L_(luaL_newstate()), options_(std::move(options)) {
  if (!L_) throw std::runtime_error("cannot create a Lua state (out of memory)");
  core::count_cpu_tensor_bytes();  // the collector's pacing reads it (tensor_memory.hpp)
  luaL_openlibs(L_);
  install_full_collection(L_);
  install_os_exit(L_, options_.script_may_exit);
  random_.install(L_);
  lua_pushlightuserdata(L_, const_cast<char*>(&kRuntimeKey));
  lua_pushlightuserdata(L_, this);
  lua_rawset(L_, LUA_REGISTRYINDEX);

  lua_getglobal(L_, "package");
  lua_getfield(L_, -1, "path");
  const std::string path = package_path(options_) + lua_tostring(L_, -1);
  lua_pop(L_, 1);
  lua_pushstring(L_, path.c_str());
  lua_setfield(L_, -2, "path");
  lua_pop(L_, 1);

  register_libraries(L_);
  watch_module_returns(L_);
}

Runtime::~Runtime() {
  closing_ = true;
  lua_close(L_);
  release_deferred_tensors();  // those the last finalizers set aside
}

namespace {

// The Runtime that owns L, or nullptr.
Runtime* owner_of(lua_State* L) noexcept {
  lua_pushlightuserdata(L, const_cast<char*>(&kRuntimeKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
  auto* runtime = static_cast<Runtime*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return runtime;
}

}  // namespace

void push_registry_table(lua_State* L, const void* key, const char* mode) {
  lua_pushlightuserdata(L, const_cast<void*>(key));
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (lua_istable(L, -1)) return;
  lua_pop(L, 1);
  lua_newtable(L);
  if (mode) {
    lua_newtable(L);
    lua_pushstring(L, mode);
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
  }
  lua_pushlightuserdata(L, const_cast<void*>(key));
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
}

bool Runtime::closing(lua_State* L) noexcept {
  const Runtime* runtime = owner_of(L);
  return !runtime || runtime->closing_;
}

Runtime& Runtime::from(lua_State* L) {
  if (Runtime* runtime = owner_of(L)) return *runtime;
  throw std::logic_error("Lua state has no engine Runtime");
}

void Runtime::call(int nargs, int nresults) {
  const int function_index = lua_gettop(L_) - nargs;
  lua_pushcfunction(L_, traceback_handler);
  lua_insert(L_, function_index);
  raised_exit_code_ = 0;
  const int status = lua_pcall(L_, nargs, nresults, function_index);
  lua_remove(L_, function_index);
  if (status != 0) {
    std::string text = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "(unknown Lua error)";
    lua_pop(L_, 1);
    if (exit_request_) throw ScriptExit{*exit_request_};
    if (status == LUA_ERRMEM) throw std::bad_alloc();
    if (status == LUA_ERRERR) {
      text =
          "stack overflow: a Lua function called itself without end (there was no stack "
          "left to say where)";
    }
    throw script_error(text, raised_exit_code_);
  }
}

int Runtime::run_file(const std::string& path, int nresults) {
  const int top = lua_gettop(L_);
  if (luaL_loadfile(L_, path.c_str()) != 0) {
    std::string text = lua_tostring(L_, -1);
    lua_pop(L_, 1);
    throw core::ScriptError(text);
  }
  call(0, nresults);
  return lua_gettop(L_) - top;
}

int Runtime::run_string(const std::string& code, const std::string& chunk_name, int nresults) {
  const int top = lua_gettop(L_);
  if (luaL_loadbuffer(L_, code.data(), code.size(), chunk_name.c_str()) != 0) {
    std::string text = lua_tostring(L_, -1);
    lua_pop(L_, 1);
    throw core::ScriptError(text);
  }
  call(0, nresults);
  return lua_gettop(L_) - top;
}

std::string current_exception_message(lua_State* L) {
  Runtime* runtime = owner_of(L);
  int exit_code = 0;
  std::string message;
  try {
    throw;
  } catch (const core::ScriptError& e) {
    // An error that already went through Lua (a Lua forward called from C++): keep its
    // traceback, which names the frames the outer traceback cannot see.
    exit_code = e.exit_code();
    message = e.traceback().empty() ? e.what() : std::string(e.what()) + "\n" + e.traceback();
  } catch (const core::Error& e) {
    exit_code = e.exit_code();
    message = e.what();
  } catch (const c10::OutOfMemoryError& e) {  // the script's error keeps out of memory's code
    exit_code = core::kExitOutOfMemory;
    message = core::describe_exception(e);
  } catch (const std::bad_alloc& e) {
    exit_code = core::kExitOutOfMemory;
    message = core::describe_exception(e);
  } catch (const std::exception& e) {
    message = core::describe_exception(e);
  } catch (...) {
    message = "unknown C++ exception";
  }
  if (runtime) runtime->raised_exit_code_ = exit_code;
  return message;
}

namespace {

// Every binding a library was built from, by function: the tables are static, so the pointers
// stay valid; set_bindings runs once per table per Lua state, from the state's own thread.
std::mutex bindings_mutex;
std::unordered_map<lua_CFunction, std::vector<const Binding*>>& registered_bindings() {
  static std::unordered_map<lua_CFunction, std::vector<const Binding*>> bindings;
  return bindings;
}

}  // namespace

const Binding* find_binding(lua_CFunction function, const std::string& name) {
  std::lock_guard<std::mutex> lock(bindings_mutex);
  const auto it = registered_bindings().find(function);
  if (it == registered_bindings().end() || it->second.empty()) return nullptr;
  for (const Binding* b : it->second) {
    if (name == b->name) return b;
  }
  return it->second.front();
}

void set_bindings(lua_State* L, const Binding* bindings) {
  {
    std::lock_guard<std::mutex> lock(bindings_mutex);
    for (const Binding* b = bindings; b && b->name; ++b) {
      auto& list = registered_bindings()[b->function];
      if (std::find(list.begin(), list.end(), b) == list.end()) list.push_back(b);
    }
  }
  for (const Binding* b = bindings; b && b->name; ++b) {
    lua_pushcfunction(L, b->function);
    lua_setfield(L, -2, b->name);
  }
}

namespace {

// __index of a type without one of its own: its methods (upvalue 1), and for any other name the
// error naming it and the nearest methods (upvalue 2: the type's name, its label).
int methods_or_error(lua_State* L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
  } else {
    return 0;
  }
  return guarded(L, [&]() -> int {
    const std::string label = lua_tostring(L, lua_upvalueindex(2));
    throw ArgumentError(missing_name_message(
        label, lua_tostring(L, 2), table_keys(L, lua_upvalueindex(1)), method_prefix(label)));
  });
}

}  // namespace

void add_bindings_table(lua_State* L, int library, const char* name,
                        std::initializer_list<const Binding*> tables) {
  library = absolute_index(L, library);
  lua_newtable(L);
  for (const Binding* table : tables) set_bindings(L, table);
  lua_setfield(L, library, name);
}

void define_type(lua_State* L, const char* name, const Binding* methods, const luaL_Reg* meta,
                 lua_CFunction gc, lua_CFunction index) {
  if (!luaL_newmetatable(L, name)) {
    lua_pop(L, 1);
    return;
  }
  lua_pushlightuserdata(L, const_cast<char*>(name));
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
  if (meta) luaL_setfuncs(L, meta, 0);
  lua_pushcfunction(L, gc);
  lua_setfield(L, -2, "__gc");
  lua_pushstring(L, name);
  lua_setfield(L, -2, "__name");
  lua_newtable(L);
  if (methods) set_bindings(L, methods);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "__methods");
  if (index) {
    lua_pushcclosure(L, index, 1);
  } else {
    lua_pushstring(L, name);
    lua_pushcclosure(L, methods_or_error, 2);
  }
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

void extend_type(lua_State* L, const char* name, const Binding* methods, const luaL_Reg* meta) {
  push_metatable(L, name);
  if (meta) luaL_setfuncs(L, meta, 0);
  lua_getfield(L, -1, "__methods");
  if (methods) set_bindings(L, methods);
  lua_pop(L, 2);
}

std::string type_name(lua_State* L, int index) {
  if (lua_getmetatable(L, index)) {
    lua_pushliteral(L, "__name");  // raw: this runs while building error messages
    lua_rawget(L, -2);
    if (lua_isstring(L, -1)) {
      std::string name = lua_tostring(L, -1);
      lua_pop(L, 2);
      return name;
    }
    lua_pop(L, 2);
  }
  return luaL_typename(L, index);
}

void require_library(lua_State* L, const char* name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

}  // namespace engine::lua
