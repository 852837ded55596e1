// engine: entry point. Dispatches to a command and maps errors to exit codes in one place.

#include <c10/util/Exception.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "engine/cli/commands.hpp"
#include "engine/core/damaged_file_guard.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/log.hpp"
#include "engine/core/memory.hpp"
#include "engine/distributed/group_watch.hpp"
#include "engine/io/hdf5.hpp"

namespace {

const char* kUsage =
    "engine: a native deep-learning trainer and benchmark suite driven by Lua scripts\n"
    "\n"
    "usage: engine COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  train SCRIPT.lua   train the model a script declares (engine train --help)\n"
    "  eval SCRIPT.lua    evaluate a checkpoint (--checkpoint) on the script's data\n"
    "  predict SCRIPT.lua predictions of a checkpoint for new data (--input FILE.csv)\n"
    "  bench --model ID   time a model's training step or forward pass (engine bench --help)\n"
    "  bench SWEEP.lua    run a benchmark sweep, each point in a fresh process, into one file\n"
    "  bench CONFIG.json  run a DLBS config as it is (DLBS's -P, -V, -E), as a sweep\n"
    "  search SCRIPT.lua  search a script's hyperparameters: grid, random or ASHA trials\n"
    "  report FILES...    run, benchmark and search files as tables and charts (engine report "
    "runs/)\n"
    "  run FILE.lua       run a Lua script with the engine's libraries loaded\n"
    "  models [ID...]     the model zoo: ids, input shapes, parameter counts\n"
    "  info               versions, threads, BLAS and devices\n"
    "\n"
    "Every run is written to an HDF5 file under runs/. Docs: docs/getting-started.md\n";

// --allocator changes the whole process's malloc, so it is applied before the command builds
// anything (for `engine run`, only a flag before the script counts: the rest are the script's).
void configure_memory(const std::string& command, const std::vector<std::string>& args) {
  const auto own =
      command == "run"
          ? std::vector<std::string>(
                args.begin(),
                args.begin() + static_cast<std::ptrdiff_t>(engine::cli::script_position(args)))
          : args;
  const std::string flag = engine::core::allocator_flag(own);
  engine::core::configure_allocator(engine::core::parse_allocator(flag.empty() ? "caching" : flag));
}

int dispatch(const std::string& command, const std::vector<std::string>& args) {
  if (command == "train") return engine::cli::train_command(args);
  if (command == "run") return engine::cli::run_command(args);
  if (command == "eval") return engine::cli::eval_command(args);
  if (command == "predict") return engine::cli::predict_command(args);
  if (command == "info") return engine::cli::info_command(args);
  if (command == "models") return engine::cli::models_command(args);
  if (command == "bench") return engine::cli::bench_command(args);
  if (command == "report") return engine::cli::report_command(args);
  if (command == "search") return engine::cli::search_command(args);
  // the launcher's own helper (docs/distributed.md, "Failures"), not for users
  if (command == "__watch_group") return engine::distributed::watch_group_main(args);
  throw engine::core::UsageError(
      "unknown command '" + command +
      "' (commands: train, eval, predict, bench, search, report, run, models, info; see engine "
      "--help)");
}

}  // namespace

int main(int argc, char** argv) {
  engine::core::log::start();
  // A write past the file-size limit (ulimit -f) fails with EFBIG, which the writers report as
  // an I/O error naming the file, instead of killing the process with SIGXFSZ mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  engine::core::install_damaged_file_handlers();
  engine::io::h5::skip_cleanup_at_exit();

  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::printf("%s", kUsage);
    return argc < 2 ? 2 : 0;
  }
  const bool version = !std::strcmp(argv[1], "--version");
  const std::string command = version ? "info" : argv[1];
  const std::vector<std::string> args =
      version ? std::vector<std::string>{} : std::vector<std::string>(argv + 2, argv + argc);
  try {
    configure_memory(command, args);
    return dispatch(command, args);
  } catch (const engine::core::ScriptError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", engine::core::describe_exception(e).c_str());
    if (!e.traceback().empty()) std::fprintf(stderr, "%s\n", e.traceback().c_str());
    return e.exit_code();
  } catch (const engine::core::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", engine::core::describe_exception(e).c_str());
    return e.exit_code();
  } catch (const c10::OutOfMemoryError& e) {  // "out of memory in WHERE: ..."
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", engine::core::describe_exception(e).c_str());
    return engine::core::kExitOutOfMemory;
  } catch (const std::bad_alloc& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", engine::core::describe_exception(e).c_str());
    return engine::core::kExitOutOfMemory;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "internal error (a bug in the engine, please report it): %s\n",
                 engine::core::describe_exception(e).c_str());
    return engine::core::kBugExitCode;
  }
}
