// engine models [ID...]: the model zoo (modules/zoo.lua) with each model's input shape, classes
// and parameter count, counted by building the model.
#include <cstdio>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"

namespace engine::cli {

int models_command(const std::vector<std::string>& args) {
  cxxopts::Options options("engine models",
                           "List the model zoo: ids (as nn.model and engine bench take them), "
                           "input shapes, classes and parameter counts.");
  options.positional_help("[ID...]").show_positional_help();
  options.add_options()("ids", "models to list (default: all)",
                        cxxopts::value<std::vector<std::string>>())(
      "threads", "libtorch threads (0: all cores)", cxxopts::value<int>()->default_value("0"))(
      "h,help", "show this help");
  options.parse_positional({"ids"});
  auto flags = parse(options, args);
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  apply_common_flags(flags);
  make_session("models")->print_zoo(flags.count("ids") ? flags["ids"].as<std::vector<std::string>>()
                                                       : std::vector<std::string>{});
  return 0;
}

}  // namespace engine::cli
