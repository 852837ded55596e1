// The Lua layer's facade, as the commands use it. Included first and alone: it must not bring
// Lua's headers with it (engine/cli reaches Lua through this header only).
#include "engine/lua/session.hpp"
#ifdef LUA_VERSION
#error "engine/lua/session.hpp includes lua.h; the commands must not see Lua's C API"
#endif

#include <doctest/doctest.h>

#include <fstream>

#include "engine/core/errors.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

std::string write_session_script(const std::string& dir, const std::string& name,
                                 const std::string& text) {
  const auto path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

lua::Session session_in(const std::string& dir) {
  lua::RuntimeOptions options;
  options.script_dir = dir;
  options.package_dirs = {dir};
  return lua::Session(options);
}

}  // namespace

TEST_CASE("Session::run_file: the script sees its path as arg[0] and its arguments from 1") {
  const auto dir = test::scratch_dir("session-run");
  const auto script = write_session_script(dir, "args.lua", R"(
local out = assert(io.open(arg[1], 'w'))
out:write(arg[0], '|', arg[2], '|', #arg)
out:close()
)");
  auto session = session_in(dir);
  session.run_file(script, {dir + "/out.txt", "second"});
  CHECK(test::read_text(dir + "/out.txt") == script + "|second|2");
  // a script's error comes back as a ScriptError naming the file and line
  const auto bad = write_session_script(dir, "bad.lua", "local x = nil\nreturn x.field\n");
  CHECK_THROWS_WITH_AS(session.run_file(bad, {}), doctest::Contains("bad.lua:2"),
                       core::ScriptError);
}

TEST_CASE("Session: a model module file to benchmark, and a sweep read into C++ values") {
  const auto dir = test::scratch_dir("session-bench");
  write_session_script(dir, "zoo.lua", "return {}\n");  // an empty zoo: the model is a file
  const auto module = write_session_script(dir, "net.lua", R"(
local nn = require 'nn'
local Net = nn.Module:extend('Net')
Net.input_shape, Net.classes = {3}, 2
function Net:init() self.fc = nn.Linear(3, 2) end
function Net:forward(x) return self.fc(x) end
return Net
)");
  auto session = session_in(dir);
  const auto model = session.bench_model(module);
  CHECK(model.input_shape == std::vector<int64_t>{3});
  CHECK(model.classes == 2);
  CHECK(model.source == module);
  REQUIRE(model.model.module);
  CHECK(model.model.forward(torch::zeros({4, 3})).sizes() == torch::IntArrayRef{4, 2});

  const auto sweep = write_session_script(dir, "sweep.lua", R"(
return { kind = 'benchmark', parameters = { model = 'mlp' },
         variables = { batch_size = {8, 16} } }
)");
  const auto spec = session.sweep(sweep);
  CHECK(spec.name == "sweep");
  REQUIRE(spec.variables.count("batch_size") == 1);
  CHECK(spec.variables.at("batch_size").size() == 2);
}
