#include "engine/lua/session.hpp"

#include <algorithm>

#include "engine/core/errors.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/sweep_reader.hpp"

extern "C" {
#include <luajit.h>
}

namespace engine::lua {
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

// Sets the global `arg`: first at index 0 (when given), then the list from 1.
void set_arg(lua_State* L, const std::string* first, const std::vector<std::string>& list) {
  lua_createtable(L, static_cast<int>(list.size()), first ? 1 : 0);
  if (first) {
    lua_pushstring(L, first->c_str());
    lua_rawseti(L, -2, 0);
  }
  for (size_t i = 0; i < list.size(); ++i) {
    lua_pushstring(L, list[i].c_str());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setglobal(L, "arg");
}

// The zoo's ids, sorted.
std::vector<std::string> zoo_ids(Runtime& runtime) {
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
  return known;
}

}  // namespace

bool is_sweep_text(const std::string& script_text) {
  return looks_like_sweep(script_text);
}

std::string luajit_version() {
  return LUAJIT_VERSION;
}

Session::Session(RuntimeOptions options)
    : runtime_(std::make_unique<Runtime>(std::move(options))) {}

Session::~Session() = default;

void Session::run_file(const std::string& path, const std::vector<std::string>& args) {
  set_arg(runtime_->state(), &path, args);
  runtime_->run_file(path, 0);
}

void Session::print_zoo(const std::vector<std::string>& ids) {
  const auto known = zoo_ids(*runtime_);
  for (const auto& id : ids) {
    if (!std::binary_search(known.begin(), known.end(), id)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw core::UsageError("engine models: unknown model '" + id + "' (known: " + list + ")");
    }
  }
  set_arg(runtime_->state(), nullptr, ids);
  runtime_->run_string(kListModels, "=engine models", 0);
}

std::unique_ptr<TrainScript> Session::train_script(const std::string& path) {
  return std::make_unique<TrainScript>(*runtime_, path);
}

BenchModel Session::bench_model(const std::string& model) {
  return load_bench_model(*runtime_, model);
}

bench::SweepSpec Session::sweep(const std::string& path) {
  return read_sweep(*runtime_, path);
}

}  // namespace engine::lua
