// torch.save(path, value) / torch.load(path): tensors and nested tables of tensors, numbers,
// strings and booleans, stored as HDF5 (engine/io/tensor_archive.hpp), readable with h5py.
// A table becomes a group (a list keeps its order through the attribute lua_list); a value
// that is not a table is stored as the dataset /value.
#include <cmath>

#include "engine/core/damaged_file_guard.hpp"
#include "engine/core/numbers.hpp"
#include "engine/io/tensor_archive.hpp"
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/torch/serialize.hpp"
#include "engine/lua/torch/tensor_value.hpp"

namespace engine::lua {
namespace {

namespace h5 = io::h5;

constexpr int kMaxDepth = 64;

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

void write_value(lua_State* L, int index, hid_t parent, const std::string& name,
                 const std::string& path, int depth, const std::string& who);

// The group of a table: string keys, or integer keys 1..n (a list). `who` starts every error
// ("torch.save", "ctx.state").
void write_table(lua_State* L, int index, hid_t group, const std::string& path, int depth,
                 const std::string& who) {
  if (depth > kMaxDepth) {
    throw ArgumentError(who + ": tables nested deeper than " + std::to_string(kMaxDepth) +
                        " levels (a cycle?) at '" + path + "'");
  }
  index = absolute_index(L, index);
  const size_t length = lua_objlen(L, index);
  size_t keys = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    ++keys;
    std::string key;
    if (lua_type(L, -2) == LUA_TSTRING) {
      key = lua_tostring(L, -2);
    } else if (lua_type(L, -2) == LUA_TNUMBER && core::exact_int64(lua_tonumber(L, -2))) {
      key = std::to_string(*core::exact_int64(lua_tonumber(L, -2)));
    } else {
      lua_pop(L, 2);
      throw ArgumentError(who + ": only string and integer keys can be saved (at '" + path + "')");
    }
    if (key.empty() || key.find('/') != std::string::npos || key == ".") {
      lua_pop(L, 2);
      throw ArgumentError(who + ": key '" + key + "' at '" + path + "' cannot name an HDF5 object");
    }
    try {
      write_value(L, -1, group, key, child_path(path, key), depth + 1, who);
    } catch (...) {
      lua_pop(L, 2);
      throw;
    }
    lua_pop(L, 1);
  }
  if (length > 0 && keys == length) {
    h5::write_attribute(group, "lua_list", static_cast<int64_t>(length));
  }
}

void write_value(lua_State* L, int index, hid_t parent, const std::string& name,
                 const std::string& path, int depth, const std::string& who) {
  index = absolute_index(L, index);
  if (auto* t = test_tensor(L, index)) {
    io::write_tensor(parent, name, *t);
    return;
  }
  switch (lua_type(L, index)) {
    case LUA_TNUMBER:
      io::write_number(parent, name, lua_tonumber(L, index));
      return;
    case LUA_TBOOLEAN:
      io::write_boolean(parent, name, lua_toboolean(L, index) != 0);
      return;
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, index, &n);
      io::write_string(parent, name, std::string(s, n));
      return;
    }
    case LUA_TTABLE: {
      auto group = h5::create_group(parent, name);
      write_table(L, index, group.get(), path, depth, who);
      return;
    }
    default:
      throw ArgumentError(who + ": cannot save a " + type_name(L, index) + " (at '" +
                          (path.empty() ? name : path) +
                          "'); tensors, numbers, strings, booleans and tables can be saved");
  }
}

void push_node(lua_State* L, hid_t parent, const std::string& name) {
  switch (io::node_kind(parent, name)) {
    case io::NodeKind::kGroup: {
      auto group = h5::open_group(parent, name);
      push_lua_group(L, group.get());
      return;
    }
    case io::NodeKind::kTensor:
      push_tensor(L, io::read_tensor(parent, name));
      return;
    case io::NodeKind::kNumber:
      lua_pushnumber(L, io::read_number(parent, name));
      return;
    case io::NodeKind::kBoolean:
      lua_pushboolean(L, io::read_boolean(parent, name));
      return;
    case io::NodeKind::kString: {
      const std::string s = io::read_string(parent, name);
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
  }
}

}  // namespace

void push_lua_group(lua_State* L, hid_t group) {
  const bool list = io::has_attribute(group, "lua_list");
  lua_newtable(L);
  for (const auto& name : io::members(group)) {
    if (list) {
      lua_pushnumber(L, std::stod(name));
    } else {
      lua_pushlstring(L, name.data(), name.size());
    }
    push_node(L, group, name);
    lua_rawset(L, -3);
  }
}

void write_lua_table(lua_State* L, int index, hid_t group, const std::string& who) {
  write_table(L, index, group, "", 0, who);
}

namespace {

int t_save(lua_State* L) {
  return guarded(L, [&] {
    const std::string path = check_string(L, 1, "torch.save");
    if (lua_isnone(L, 2)) throw ArgumentError("torch.save(path, value): value is missing");
    auto file = h5::create_file(path, /*overwrite=*/true);
    if (lua_istable(L, 2) && !test_tensor(L, 2)) {
      write_table(L, 2, file.get(), "", 0, "torch.save");
    } else {
      write_value(L, 2, file.get(), "value", "", 0, "torch.save");
      h5::write_attribute(file.get(), "lua_single", true);
    }
    return 0;
  });
}

int t_load(lua_State* L) {
  return guarded(L, [&] {
    const std::string path = check_string(L, 1, "torch.load");
    // a crash inside HDF5 is a damaged file (exit 4), and every error names the file
    return core::reading_file(path, [&] {
      auto file = h5::open_file(path, false);
      if (io::has_attribute(file.get(), "lua_single")) {
        push_node(L, file.get(), "value");
      } else {
        push_lua_group(L, file.get());
      }
      return 1;
    });
  });
}

}  // namespace

void add_serialization(lua_State* L, int library) {
  lua_pushcfunction(L, t_save);
  lua_setfield(L, library, "save");
  lua_pushcfunction(L, t_load);
  lua_setfield(L, library, "load");
}

}  // namespace engine::lua
