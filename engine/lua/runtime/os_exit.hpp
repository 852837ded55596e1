// os.exit in the engine's Lua. Lua's own ends the process on the spot: no destructor runs, so
// a run file stays 'running' with its lock file behind it, the rows since the last flush are
// lost, and the exit code says nothing went wrong. Here it never ends the process itself:
// - in a training, evaluation, prediction, benchmark or search script it is refused, as a
//   script error naming the line (exit code 3), and the command closes what it wrote as for
//   any other error in the script;
// - in `engine run` (RuntimeOptions::script_may_exit) the script ends there: Runtime::call
//   throws ScriptExit, and the command returns its code once everything is released.
#pragma once

struct lua_State;

namespace engine::lua {

// What os.exit(code) asked of `engine run`: true or none is 0, false is 1, a number is itself.
struct ScriptExit {
  int code = 0;
};

// Replaces os.exit. The Runtime's call() turns a requested exit into ScriptExit.
void install_os_exit(lua_State* L, bool may_exit);

}  // namespace engine::lua
