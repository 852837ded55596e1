#include <doctest/doctest.h>

#include <fstream>

#include "engine/lua/runtime/runtime.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

std::string write_script(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("every binding leaves the Lua stack as it found it, even when it raises") {
  lua::Runtime runtime;
  lua_State* L = runtime.state();
  int checked = 0;
  for (const char* library : {"torch", "nn", "optim", "data", "engine"}) {
    lua_getglobal(L, "require");
    lua_pushstring(L, library);
    REQUIRE(lua_pcall(L, 1, 1, 0) == 0);
    const int table = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, table) != 0) {
      if (lua_iscfunction(L, -1)) {
        // Call with no arguments and with a wrong one; errors are expected, stack drift is not.
        for (int variant = 0; variant < 2; ++variant) {
          const int before = lua_gettop(L);
          lua_pushvalue(L, -1);
          if (variant == 1) lua_pushboolean(L, 1);
          lua_pcall(L, variant, 0, 0) == 0 ? void() : lua_pop(L, 1);
          CHECK_MESSAGE(lua_gettop(L) == before, library, ".", lua_tostring(L, -2));
          ++checked;
        }
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  CHECK(checked > 60);
  CHECK(lua_gettop(L) == 0);
}

TEST_CASE("every tensor and module method leaves the stack balanced, with good and bad arguments") {
  lua::Runtime runtime;
  lua_State* L = runtime.state();
  REQUIRE(luaL_dostring(L, "torch = require 'torch'; nn = require 'nn'") == 0);
  int checked = 0;
  // receiver expression, metatable name
  for (auto [receiver, type] :
       {std::pair{"torch.randn(3, 4)", "Tensor"}, std::pair{"nn.Linear(4, 2)", "Module"}}) {
    luaL_getmetatable(L, type);
    lua_getfield(L, -1, "__methods");
    const int methods = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, methods) != 0) {
      // Arguments: none, a number, a tensor, a table: each either works or raises, cleanly.
      for (const char* args : {"", "2", "torch.ones(3, 4)", "{}", "true, 'x'"}) {
        const int before = lua_gettop(L);
        const std::string code =
            std::string("local f = ...; return f(") + receiver + (args[0] ? ", " : "") + args + ")";
        REQUIRE(luaL_loadstring(L, code.c_str()) == 0);
        lua_pushvalue(L, -2);
        lua_pcall(L, 1, 0, 0) == 0 ? void() : lua_pop(L, 1);
        CHECK_MESSAGE(lua_gettop(L) == before, type, ":", lua_tostring(L, -2), "(", args, ")");
        ++checked;
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 2);
  }
  CHECK(checked > 400);
  CHECK(lua_gettop(L) == 0);
}

TEST_CASE("C++ exceptions reach Lua with their message, never as 'C++ exception'") {
  lua::Runtime runtime;
  const auto dir = test::scratch_dir("lua-errors");
  auto path = write_script(
      dir, "a.lua",
      "local torch = require 'torch'\n"
      "local ok, err = pcall(function() local t = torch.zeros(2, 3, {dtype = 'float8'}); return t "
      "end)\n"
      "assert(not ok)\n"
      "assert(err:find('unknown dtype'), err)\n"
      "assert(err:find('a.lua:2:'), err)\n"
      "local ok2, err2 = pcall(function() return torch.ones(2, 3):matmul(torch.ones(2, 3)) end)\n"
      "assert(not ok2 and err2:find('cannot be multiplied'), err2)\n"
      "assert(not err2:find('C%+%+ exception'), err2)\n");
  CHECK_NOTHROW(runtime.run_file(path, 0));
}

TEST_CASE("script errors become ScriptErrors with file, line and traceback") {
  lua::Runtime runtime;
  const auto dir = test::scratch_dir("lua-script-errors");
  auto syntax = write_script(dir, "syntax.lua", "local x = \nreturn {");
  try {
    runtime.run_file(syntax, 0);
    FAIL("expected ScriptError");
  } catch (const core::ScriptError& e) {
    CHECK(std::string(e.what()).find("syntax.lua:2:") != std::string::npos);
  }
  auto runtime_error =
      write_script(dir, "boom.lua", "local function f()\n  error('boom')\nend\nf()\n");
  try {
    runtime.run_file(runtime_error, 0);
    FAIL("expected ScriptError");
  } catch (const core::ScriptError& e) {
    CHECK(std::string(e.what()).find("boom.lua:2: boom") != std::string::npos);
    CHECK(e.traceback().find("boom.lua:4") != std::string::npos);
  }
  CHECK(lua_gettop(runtime.state()) == 0);
}

TEST_CASE("option tables reject unknown keys and name the accepted ones") {
  lua::Runtime runtime;
  const auto dir = test::scratch_dir("lua-options");
  auto path = write_script(dir, "o.lua",
                           "local nn = require 'nn'\n"
                           "local ok, err = pcall(nn.Conv2d, 1, 2, 3, {strid = 2})\n"
                           "assert(not ok)\n"
                           "assert(err:find(\"unknown option 'strid'\"), err)\n"
                           "assert(err:find('stride, padding'), err)\n");
  CHECK_NOTHROW(runtime.run_file(path, 0));
}
