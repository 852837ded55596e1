// PyTorch names the engine leaves out on purpose, each with what stands for it: the reasons a
// missing-name error and the coverage page give.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace engine::lua {

// {PyTorch name, reason}, by name.
const std::vector<std::pair<std::string, std::string>>& not_offered();
// The reason for one name, "" when it is not left out on purpose.
std::string not_offered_reason(const std::string& pytorch_name);

}  // namespace engine::lua
