// engine run FILE.lua [ARGS...]: runs a plain Lua script with the engine's libraries.
#include <cstdio>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/seed.hpp"
#include "engine/lua/session.hpp"

namespace engine::cli {

int run_command(const std::vector<std::string>& args) {
  // Flags come before the script; everything after it belongs to the script (its `arg` table).
  const size_t script_at = script_position(args);
  std::vector<std::string> own(args.begin(), args.begin() + std::min(script_at + 1, args.size()));
  cxxopts::Options options(
      "engine run",
      "Run a Lua script with the engine's libraries (torch, nn, optim, data, engine).");
  options.positional_help("FILE.lua [ARGS...]").show_positional_help();
  options.add_options()("script", "Lua script", cxxopts::value<std::string>())(
      "threads", "libtorch threads (0: all cores)", cxxopts::value<int>()->default_value("0"))(
      "seed", "seed libtorch's generators first", cxxopts::value<uint64_t>())(
      "allocator", core::kAllocatorHelp, cxxopts::value<std::string>()->default_value("caching"))(
      "q,quiet", "print only errors")("v,verbose", "print debug messages")("h,help",
                                                                           "show this help");
  options.parse_positional({"script"});
  auto flags = parse(options, own);
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  if (!flags.count("script"))
    throw core::UsageError("engine run needs a script: engine run FILE.lua");
  const std::string path = flags["script"].as<std::string>();
  check_script(path);
  apply_common_flags(flags);
  if (flags.count("seed")) core::seed_everything(flags["seed"].as<uint64_t>());

  auto session = session_options(path);
  session.script_may_exit = true;
  try {
    lua::Session(session).run_file(
        path, {args.begin() + static_cast<std::ptrdiff_t>(script_at) + 1, args.end()});
  } catch (const lua::ScriptExit& exit) {
    return exit.code;  // os.exit(code): the session is closed, everything released
  }
  return 0;
}

}  // namespace engine::cli
