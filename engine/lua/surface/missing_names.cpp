#include "engine/lua/surface/missing_names.hpp"

#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "engine/core/nearest_names.hpp"
#include "engine/lua/surface/not_offered.hpp"

namespace engine::lua {
namespace {

struct Namespace {
  const char* label;
  std::vector<const char*> pytorch;  // tried in order
};

const Namespace kNamespaces[] = {
    {"torch", {"torch"}},
    {"torch.linalg", {"torch.linalg"}},
    {"torch.autograd", {"torch.autograd"}},
    {"nn", {"torch.nn"}},
    {"nn.F", {"torch.nn.functional"}},
    {"nn.init", {"torch.nn.init"}},
    {"nn.utils", {"torch.nn.utils"}},
    {"optim", {"torch.optim", "torch.optim.lr_scheduler"}},
    {"Tensor", {"torch.Tensor"}},
    {"Module", {"torch.nn.Module"}},
    {"Optimizer", {"torch.optim.Optimizer"}},
};

const Namespace* namespace_of(const std::string& label) {
  for (const auto& ns : kNamespaces) {
    if (label == ns.label) return &ns;
  }
  return nullptr;
}

// PyTorch's public names (engine/lua/surface/pytorch_names.txt, written from python3-torch).
const std::unordered_set<std::string>& pytorch_names() {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> out;
    const char* text = embedded_lua("pytorch_names.txt");
    std::istringstream lines(text ? text : "");
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line[0] != '#') out.insert(line);
    }
    return out;
  }();
  return names;
}

std::string or_list(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

// __index of a guarded table: upvalue 1 is its label.
int guarded_index(lua_State* L) {
  if (lua_type(L, 2) != LUA_TSTRING) return 0;  // t[1]: no name to report
  return guarded(L, [&]() -> int {
    const std::string label = lua_tostring(L, lua_upvalueindex(1));
    const std::string name = lua_tostring(L, 2);
    throw ArgumentError(missing_name_message(label, name, table_keys(L, 1), label + "."));
  });
}

}  // namespace

std::string pytorch_name_of(const std::string& label, const std::string& name) {
  const auto* ns = namespace_of(label);
  if (!ns) return "";
  for (const char* prefix : ns->pytorch) {
    const std::string full = std::string(prefix) + "." + name;
    if (pytorch_names().count(full)) return full;
  }
  return "";
}

std::string missing_name_message(const std::string& label, const std::string& name,
                                 const std::vector<std::string>& known, const std::string& shown) {
  std::string text = label + " has no '" + name + "'";
  std::vector<std::string> nearest;
  for (const auto& n : core::nearest_names(name, known)) nearest.push_back(shown + n);
  const std::string pytorch = pytorch_name_of(label, name);
  if (!pytorch.empty()) {
    const std::string reason = not_offered_reason(pytorch);
    if (!reason.empty()) return text + " (" + pytorch + "): " + reason;
    if (nearest.empty()) {
      return text + " (" + pytorch +
             " is not in the engine yet; docs/lua-api/coverage.md lists what is)";
    }
    return text + " (" + pytorch + "): did you mean " + or_list(nearest) + "?";
  }
  if (!nearest.empty()) text += ": did you mean " + or_list(nearest) + "?";
  return text;
}

std::string method_prefix(const std::string& label) {
  static const std::pair<const char*, const char*> kPrefixes[] = {
      {"Tensor", "x:"}, {"Optimizer", "opt:"}, {"Scheduler", "sched:"}, {"Pipeline", "ds:"},
      {"Module", "m:"}, {"Loss", "loss:"},     {"Space", "space:"}};
  for (const auto& [type, prefix] : kPrefixes) {
    if (label == type) return prefix;
  }
  return "x:";
}

std::vector<std::string> table_keys(lua_State* L, int index) {
  index = absolute_index(L, index);
  std::vector<std::string> keys;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING) keys.emplace_back(lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

void guard_library(lua_State* L, int index, const std::string& label) {
  index = absolute_index(L, index);
  for (const auto& key : table_keys(L, index)) {
    StackGuard keep(L);
    raw_get(L, index, key.c_str());
    if (!lua_istable(L, -1)) continue;
    const int field = lua_gettop(L);
    if (lua_getmetatable(L, field)) continue;  // a class (nn.Module) keeps its own rules
    const std::string inner = label + "." + key;
    if (namespace_of(inner)) guard_library(L, field, inner);
  }
  lua_newtable(L);  // the metatable
  lua_pushstring(L, label.c_str());
  lua_pushcclosure(L, guarded_index, 1);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, index);
}

}  // namespace engine::lua
