// The Lua layer as the commands see it: one Lua state for one command, and what a command asks
// of it (run a file with its arguments, read a training script into a spec, load a model to
// benchmark, read a sweep, list the model zoo). Nothing here includes Lua's own headers: the
// commands (engine/cli) reach Lua through this header alone, which tests/architecture checks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/bench/sweep.hpp"
#include "engine/lua/runtime/os_exit.hpp"  // ScriptExit: how engine run ends on os.exit
#include "engine/lua/runtime/runtime_options.hpp"
#include "engine/lua/script/bench_model.hpp"
#include "engine/lua/script/train_script_reader.hpp"

namespace engine::lua {

class Runtime;

// "LuaJIT 2.1.0-beta3"
std::string luajit_version();

// Whether a script's text declares a benchmark sweep (kind = 'benchmark'); engine bench runs
// any other script as a training script's step.
bool is_sweep_text(const std::string& script_text);

class Session {
 public:
  explicit Session(RuntimeOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs a Lua file as `engine run` does: the script sees arg[0] = path, arg[1..] = args.
  void run_file(const std::string& path, const std::vector<std::string>& args);
  // Prints the zoo's models (all when ids is empty): input, classes, parameters, module.
  // An id the zoo does not have is a UsageError naming the known ones.
  void print_zoo(const std::vector<std::string>& ids);
  // Runs a training script; the spec is built from what it returned (TrainScript::build).
  // The script lives no longer than this session.
  std::unique_ptr<TrainScript> train_script(const std::string& path);
  // A zoo id or a Lua module file, built for engine bench; a module written in Lua runs in
  // this session, which must outlive the model.
  BenchModel bench_model(const std::string& model);
  // A benchmark sweep script, read into plain C++ values; its computed parameters and
  // predicates call back into this session, which must outlive the spec.
  bench::SweepSpec sweep(const std::string& path);

 private:
  std::unique_ptr<Runtime> runtime_;
};

}  // namespace engine::lua
