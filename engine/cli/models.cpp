// engine models [ID...]: the model zoo (modules/zoo.lua) with each model's input shape, classes
// and parameter count, counted by building the model.
#include <algorithm>
#include <cstdio>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/errors.hpp"

namespace engine::cli {
namespace {

// Runs with the ids to list as `arg`; builds each model with gradients off.
const char* kListModels = R"lua(
local torch, nn, zoo = require 'torch', require 'nn', require 'zoo'
local ids = {}
for i = 1, #arg do ids[i] = arg[i] end
if #ids == 0 then
  for id in pairs(zoo) do ids[#ids + 1] = id end
  table.sort(ids)
end
local function grouped(n)
  local s = tostring(n)
  repeat
    local k
    s, k = s:gsub('^(%d+)(%d%d%d)', '%1,%2')
  until k == 0
  return s
end
print(('%-15s %-12s %8s %14s  %s'):format('id', 'input', 'classes', 'parameters', 'module'))
for _, id in ipairs(ids) do
  local entry = zoo[id]
  local count = torch.no_grad(function()
    local model = nn.model(id)
    return model:num_parameters()
  end)
  collectgarbage()
  print(('%-15s %-12s %8d %14s  modules/%s.lua%s'):format(id, table.concat(entry.input, 'x'),
    entry.classes, grouped(count), entry.module,
    entry.input_kind and ('  (' .. entry.input_kind .. ')') or ''))
end
)lua";

// An id the zoo does not have is a usage error naming the known ones.
void check_ids(lua::Runtime& runtime, const std::vector<std::string>& ids) {
  lua_State* L = runtime.state();
  runtime.run_string("return require 'zoo'", "=engine models", 1);
  std::vector<std::string> known;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) known.emplace_back(lua_tostring(L, -1));
  }
  lua_pop(L, 1);
  std::sort(known.begin(), known.end());
  for (const auto& id : ids) {
    if (!std::binary_search(known.begin(), known.end(), id)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw core::UsageError("engine models: unknown model '" + id + "' (known: " + list + ")");
    }
  }
}

}  // namespace

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
  auto runtime = make_runtime("models");
  lua_State* L = runtime->state();
  const auto ids =
      flags.count("ids") ? flags["ids"].as<std::vector<std::string>>() : std::vector<std::string>{};
  check_ids(*runtime, ids);
  lua_newtable(L);
  for (size_t i = 0; i < ids.size(); ++i) {
    lua_pushstring(L, ids[i].c_str());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setglobal(L, "arg");
  runtime->run_string(kListModels, "=engine models", 0);
  return 0;
}

}  // namespace engine::cli
