// The engine's commands, one file each; main.cpp dispatches on the first argument.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace engine::cli {

// Each takes the arguments after the command name and returns the exit code.
int train_command(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);
int info_command(const std::vector<std::string>& args);
int models_command(const std::vector<std::string>& args);
int eval_command(const std::vector<std::string>& args);
int predict_command(const std::vector<std::string>& args);
int bench_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int search_command(const std::vector<std::string>& args);

// `engine run FLAGS FILE.lua ARGS...`: the position of FILE.lua among the arguments; the ones
// after it belong to the script.
size_t script_position(const std::vector<std::string>& args);

}  // namespace engine::cli
