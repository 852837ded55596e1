#include "engine/cli/common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "engine/cli/commands.hpp"
#include "engine/cli/distributed.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/log.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/nearest_names.hpp"
#include "engine/core/threads.hpp"
#include "engine_paths_config.hpp"

namespace engine::cli {
namespace fs = std::filesystem;

std::string engine_home() {
  if (const char* home = std::getenv("ENGINE_HOME")) return home;
  return ENGINE_SOURCE_DIR;
}

core::DeviceSettings device_settings(const cxxopts::ParseResult& flags) {
  core::DeviceSettings settings;
  if (flags.count("cudnn_benchmark")) {
    settings.cudnn_benchmark =
        core::parse_setting_bool("--cudnn_benchmark", flags["cudnn_benchmark"].as<std::string>());
  }
  if (flags.count("tf32")) {
    settings.tf32 = core::parse_setting_bool("--tf32", flags["tf32"].as<std::string>());
  }
  return settings;
}

void add_run_flags(cxxopts::Options& options) {
  options.add_options("run")("set", "override a hyperparameter: --set key=value (repeatable)",
                             cxxopts::value<std::vector<std::string>>())(
      "out", "root folder for run files", cxxopts::value<std::string>()->default_value("runs"))(
      "threads", "libtorch threads (0: all cores)", cxxopts::value<int>()->default_value("0"))(
      "device", "cpu, cuda or cuda:N", cxxopts::value<std::string>()->default_value("cpu"))(
      "cudnn_benchmark", core::kCudnnBenchmarkHelp, cxxopts::value<std::string>())(
      "tf32", core::kTf32Help, cxxopts::value<std::string>())(
      "seed", "random seed (default: the script's, else a fresh one)", cxxopts::value<uint64_t>())(
      "allocator", core::kAllocatorHelp, cxxopts::value<std::string>()->default_value("caching"))(
      "q,quiet", "print only errors and the run file's path")("v,verbose", "print debug messages")(
      "h,help", "show this help");
}

int apply_common_flags(const cxxopts::ParseResult& flags) {
  if (flags.count("quiet")) core::log::set_level(core::log::Level::warn);
  if (flags.count("verbose")) core::log::set_level(core::log::Level::debug);
  // a rank chooses again once the group knows how many ranks share its machine
  return apply_threads(flags["threads"].as<int>(), distributed::World{});
}

size_t script_position(const std::vector<std::string>& args) {
  size_t at = 0;
  while (at < args.size() && args[at].rfind("-", 0) == 0) {
    const std::string& flag = args[at];
    if (flag == "--threads" || flag == "--seed" || flag == "--allocator") ++at;  // its value
    ++at;
  }
  return at;
}

std::unique_ptr<lua::Session> make_session(const std::string& script_path) {
  return std::make_unique<lua::Session>(session_options(script_path));
}

lua::RuntimeOptions session_options(const std::string& script_path) {
  lua::RuntimeOptions options;
  const fs::path dir = fs::path(script_path).parent_path();
  options.script_dir = dir.empty() ? "." : dir.string();
  options.package_dirs = {options.script_dir, (fs::path(engine_home()) / "modules").string()};
  options.dataset_dirs = {(fs::current_path() / "datasets").string(),
                          (fs::path(engine_home()) / "datasets").string()};
  return options;
}

std::optional<cxxopts::ParseResult> parse_script_command(cxxopts::Options& options,
                                                         const std::vector<std::string>& args,
                                                         const std::string& usage) {
  options.positional_help("SCRIPT").show_positional_help();
  options.add_options()("script", "training script (.lua)", cxxopts::value<std::string>());
  add_run_flags(options);
  options.parse_positional({"script"});
  auto flags = parse(options, args);
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return std::nullopt;
  }
  if (!flags.count("script")) throw core::UsageError(options.program() + " needs " + usage);
  return flags;
}

run::RunRequest run_request(const std::string& command, const cxxopts::ParseResult& flags,
                            const std::vector<std::string>& args) {
  run::RunRequest request;
  request.script = flags["script"].as<std::string>();
  check_script(request.script);
  request.lua = session_options(request.script);
  request.command = command;
  for (const auto& a : args) request.command += " " + a;
  request.threads = apply_common_flags(flags);
  request.device = flags["device"].as<std::string>();
  request.device_settings = device_settings(flags);
  if (flags.count("seed")) request.seed = flags["seed"].as<uint64_t>();
  if (flags.count("set")) request.overrides = flags["set"].as<std::vector<std::string>>();
  return request;
}

const char* const kCheckpointHelp =
    "a checkpoint (ckpt-N.h5) or a run file (its latest checkpoint); RUN.h5:best, RUN.h5:STEP "
    "or RUN.h5:latest picks one of the run's by name";

run::RunRequest checkpoint_request(const std::string& command, const cxxopts::ParseResult& flags,
                                   const std::vector<std::string>& args) {
  if (!flags.count("checkpoint")) {
    throw core::UsageError("--checkpoint is required: a checkpoint (ckpt-N.h5) or a run file");
  }
  auto request = run_request(command, flags, args);
  request.checkpoint = flags["checkpoint"].as<std::string>();
  request.checkpoint_flag = "--checkpoint";
  return request;
}

// cxxopts says "Argument ‘many’ failed to parse" without the flag: name the flag that took it.
static std::string parse_error_text(const std::string& what, const std::vector<std::string>& args) {
  const std::string open = "Argument \u2018", close = "\u2019 failed to parse";
  const auto from = what.find(open), to = what.find(close);
  if (from == std::string::npos || to == std::string::npos || to < from + open.size()) return what;
  const std::string value = what.substr(from + open.size(), to - from - open.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const auto eq = args[i].find('=');
    if (args[i].rfind("-", 0) == 0 && eq != std::string::npos && args[i].substr(eq + 1) == value) {
      return args[i].substr(0, eq) + " " + value + ": not a valid value for this flag";
    }
    if (args[i] == value && i > 0 && args[i - 1].rfind("-", 0) == 0) {
      return args[i - 1] + " " + value + ": not a valid value for this flag";
    }
  }
  return what;
}

// The flags `options` has, read off its help text (cxxopts lists no names otherwise).
std::vector<std::string> flag_names(const cxxopts::Options& options) {
  std::vector<std::string> names;
  const std::string help = options.help();
  for (size_t at = help.find("--"); at != std::string::npos; at = help.find("--", at + 2)) {
    size_t end = at + 2;
    while (end < help.size() && (std::isalnum(static_cast<unsigned char>(help[end])) ||
                                 help[end] == '_' || help[end] == '-')) {
      ++end;
    }
    const std::string name = help.substr(at + 2, end - at - 2);
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return names;
}

// "Option 'thread' does not exist": the nearest flags, or, for a name no flag is near (--lr),
// how a script's hyperparameter is set.
std::string unknown_flag_text(const std::string& what, const cxxopts::Options& options,
                              const std::vector<std::string>& args) {
  const auto open = what.find("Option "), close = what.find(" does not exist");
  if (open != 0 || close == std::string::npos) return {};
  std::string name = what.substr(7, close - 7);
  // between the quotes cxxopts puts around it (UTF-8 ‘ ’ or ASCII)
  const auto first = name.find_first_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
  const auto last =
      name.find_last_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
  if (first == std::string::npos || last == std::string::npos || last < first) return {};
  name = name.substr(first, last - first + 1);
  std::string text = "unknown flag --" + name;
  const auto nearest = core::nearest_names(name, flag_names(options));
  if (!nearest.empty()) {
    std::vector<std::string> flags;
    for (const auto& n : nearest) flags.push_back("--" + n);
    return text + ": did you mean " + core::join(flags, " or ") + "?";
  }
  // its value, when one follows: --lr 0.1 or --lr=0.1
  std::string value = "VALUE";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--" + name + "=", 0) == 0) value = args[i].substr(name.size() + 3);
    if (args[i] == "--" + name && i + 1 < args.size() && args[i + 1].rfind("-", 0) != 0) {
      value = args[i + 1];
    }
  }
  return text + "; a script's hyperparameter is set with --set " + name + "=" + value;
}

cxxopts::ParseResult parse(cxxopts::Options& options, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string program = options.program();
  argv.push_back(program.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  char** data = argv.data();
  std::optional<cxxopts::ParseResult> result;
  try {
    result.emplace(options.parse(argc, data));
  } catch (const std::exception& e) {
    const std::string unknown = unknown_flag_text(e.what(), options, args);
    throw core::UsageError((unknown.empty() ? parse_error_text(e.what(), args) : unknown) +
                           " (see " + options.program() + " --help)");
  }
  // cxxopts keeps what matched no option aside; a stray word is a mistake, not a no-op
  if (!result->unmatched().empty()) {
    throw core::UsageError("unexpected argument '" + result->unmatched().front() + "' (see " +
                           options.program() + " --help)");
  }
  return std::move(*result);
}

void check_script(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw core::UsageError("script not found: " + path);
  if (!fs::is_regular_file(path, ec)) throw core::UsageError("not a file: " + path);
}

// A word as the shell takes it back: quoted when it holds anything but plain path characters.
std::string shell_word(const std::string& word) {
  const bool plain =
      !word.empty() && word.find_first_not_of(
                           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij"
                           "klmnopqrstuvwxyz0123456789_./:=+-,@%") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::IoError("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> take_repeated(std::vector<std::string>& args, const std::string& flag) {
  const bool short_flag = flag.size() == 2;
  const std::string attached = short_flag ? flag : flag + "=";
  std::vector<std::string> values;
  for (size_t i = 0; i < args.size();) {
    if (args[i] == flag) {
      if (i + 1 >= args.size()) throw core::UsageError(flag + " needs a value: name=value");
      values.push_back(args[i + 1]);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                 args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else if (args[i].size() > attached.size() && args[i].rfind(attached, 0) == 0) {
      values.push_back(args[i].substr(attached.size()));
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return values;
}

}  // namespace engine::cli
