// What the commands share: the engine's folders, flag groups, logging set-up, Lua sessions.
#pragma once

#include <cxxopts.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/device_settings.hpp"
#include "engine/lua/session.hpp"
#include "engine/run/run_context.hpp"

namespace engine::cli {

// The engine's own folder (modules/, datasets/): $ENGINE_HOME, else the source folder the
// binary was built from.
std::string engine_home();

// --threads --device --seed --allocator --cudnn_benchmark --tf32 --set --out --quiet --verbose
void add_run_flags(cxxopts::Options& options);
// --cudnn_benchmark and --tf32 as given (each a value: true or false), else their defaults.
core::DeviceSettings device_settings(const cxxopts::ParseResult& flags);

// Applies --quiet / --verbose and --threads; returns the thread count in use.
int apply_common_flags(const cxxopts::ParseResult& flags);

// A Lua session whose package.path starts with the script's folder, then the engine's modules/.
std::unique_ptr<lua::Session> make_session(const std::string& script_path);
lua::RuntimeOptions session_options(const std::string& script_path);

// A command that runs a training script (train, eval, predict): SCRIPT is its positional
// argument, the run flags are added. Prints the help and returns nothing for --help; without a
// script, a UsageError shows `usage`.
std::optional<cxxopts::ParseResult> parse_script_command(cxxopts::Options& options,
                                                         const std::vector<std::string>& args,
                                                         const std::string& usage);
// What such a command's flags ask for: the script and its session's folders, the command line,
// --device, --threads (applied here, with --quiet and --verbose), --seed and --set.
run::RunRequest run_request(const std::string& command, const cxxopts::ParseResult& flags,
                            const std::vector<std::string>& args);
// The same for a command that needs --checkpoint (eval, predict).
run::RunRequest checkpoint_request(const std::string& command, const cxxopts::ParseResult& flags,
                                   const std::vector<std::string>& args);
extern const char* const kCheckpointHelp;

// Parses args (without the command name); throws UsageError for unknown or malformed flags.
cxxopts::ParseResult parse(cxxopts::Options& options, const std::vector<std::string>& args);

// Throws UsageError naming the path when the script does not exist or is not a file.
void check_script(const std::string& path);

std::string read_file(const std::string& path);

// A word as the shell takes it back: quoted when it holds anything but plain path characters.
std::string shell_word(const std::string& word);

// Takes every "--flag VALUE" and "--flag=VALUE" (a short flag: "-P VALUE" and "-PVALUE", as
// DLBS writes -Pexp.num_batches=100) out of args, in order. cxxopts would split a repeated
// flag's values at commas, which --var a,b,c and --set input_shape=1,28,28 need whole.
std::vector<std::string> take_repeated(std::vector<std::string>& args, const std::string& flag);

}  // namespace engine::cli
