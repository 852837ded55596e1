// require 'data': sources, transforms and pipeline stages. Lua only declares pipelines; the
// samples flow through C++ worker threads. ds:iter() is the slow path for tests and tools.
// The sources, data.csv and the transforms are in this folder's other files; this one has the
// pipeline's methods and assembles the library.
#include <optional>

#include "engine/data/loader.hpp"
#include "engine/lua/data/data_tables.hpp"

namespace engine::lua {
namespace {

struct ReaderBox {
  static constexpr char kTypeName[] = "PipelineIterator";  // one address in every file: the tag
  std::unique_ptr<data::EpochReader> reader;
};

int p_map(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "map");
    return push_pipeline(L, p.map(check<TransformBox>(L, 2, "map").transform));
  });
}

int p_shuffle(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "shuffle");
    return push_pipeline(L, p.shuffle(lua_isnoneornil(L, 2) || lua_toboolean(L, 2)));
  });
}

int p_take(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "take");
    return push_pipeline(L, p.take(check_integer(L, 2, "take")));
  });
}

// ds:shard(rank, world): rank counts from 0, as torchrun numbers processes.
int p_shard(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "shard");
    return push_pipeline(L, p.shard(check_integer(L, 2, "shard"), check_integer(L, 3, "shard")));
  });
}

// ds:split{0.9, 0.1, seed = 0}: two or more disjoint parts of the source, as many pipelines
int p_split(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "split");
    if (!lua_istable(L, 2)) {
      throw ArgumentError("split expects a table of sizes, {0.9, 0.1} or {50000, 10000}");
    }
    std::vector<double> sizes;
    uint64_t seed = 0;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
      if (lua_type(L, -2) == LUA_TSTRING && std::string(lua_tostring(L, -2)) == "seed") {
        if (lua_type(L, -1) != LUA_TNUMBER || lua_tonumber(L, -1) < 0) {
          throw ArgumentError("split: seed must be a number of at least 0");
        }
        seed = static_cast<uint64_t>(lua_tonumber(L, -1));
      } else if (lua_type(L, -2) != LUA_TNUMBER || lua_type(L, -1) != LUA_TNUMBER) {
        throw ArgumentError(
            "split takes sizes (numbers) and 'seed', got key " + std::string(luaL_typename(L, -2)) +
            (lua_type(L, -2) == LUA_TSTRING ? " '" + std::string(lua_tostring(L, -2)) + "'" : ""));
      }
      lua_pop(L, 1);
    }
    const int n = static_cast<int>(lua_objlen(L, 2));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, 2, i);
      sizes.push_back(lua_tonumber(L, -1));
      lua_pop(L, 1);
    }
    const auto parts = p.split(sizes, seed);
    for (const auto& part : parts) push_pipeline(L, part);
    return static_cast<int>(parts.size());
  });
}

int p_batch(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "batch");
    const int64_t n = check_integer(L, 2, "batch");
    Options o(L, 3, "batch", {"drop_last"});
    return push_pipeline(L, p.batch(n, o.boolean("drop_last", false)));
  });
}

int p_prefetch(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "prefetch");
    return push_pipeline(L, p.prefetch(static_cast<int>(check_integer(L, 2, "prefetch"))));
  });
}

int p_workers(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "workers");
    return push_pipeline(L, p.workers(static_cast<int>(check_integer(L, 2, "workers"))));
  });
}

int p_size(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, static_cast<double>(pipeline(L, "size").size()));
    return 1;
  });
}

int p_tostring(lua_State* L) {
  return guarded(L, [&] {
    const std::string s = pipeline(L, "tostring").describe();
    lua_pushstring(L, s.c_str());
    return 1;
  });
}

}  // namespace

void push_inputs(lua_State* L, const std::map<std::string, torch::Tensor>& inputs) {
  lua_createtable(L, 0, static_cast<int>(inputs.size()) + 1);
  for (const auto& [name, tensor] : inputs) {
    // category ids are 1-based in Lua, as nn.Embedding takes them
    push_tensor(L, name == "categorical" ? tensor + 1 : tensor);
    lua_setfield(L, -2, name.c_str());
  }
}

data::Batch read_inputs(lua_State* L, int index, const std::string& what) {
  data::Batch batch;
  index = absolute_index(L, index);
  if (torch::Tensor* t = test_tensor(L, index)) {
    batch.input = *t;
    return batch;
  }
  if (!lua_istable(L, index)) {
    throw core::ScriptError(what + " must return a tensor or a table of named tensors, got " +
                            type_name(L, index));
  }
  for (lua_pushnil(L); lua_next(L, index) != 0; lua_pop(L, 1)) {
    torch::Tensor* t = test_tensor(L, -1);
    if (lua_type(L, -2) != LUA_TSTRING || !t) {
      throw core::ScriptError(what +
                              ": every entry must be a named tensor ({input = x, ...}), got " +
                              type_name(L, -2) + " key with a " + type_name(L, -1) + " value");
    }
    const std::string name = lua_tostring(L, -2);
    if (name == "input") {
      batch.input = *t;
    } else if (name == "categorical") {
      batch.categorical = *t - 1;  // 1-based in Lua
    } else if (name != "target") {
      batch.inputs[name] = *t;
    }
  }
  if (!batch.input.defined()) {
    throw core::ScriptError(what + ": the table has no 'input' (every batch has one)");
  }
  return batch;
}

void push_batch(lua_State* L, const data::Batch& batch) {
  push_inputs(L, batch.named_inputs());
  if (batch.target.defined()) {
    // Class targets are 1-based in Lua.
    push_tensor(L, nn::one_based_classes(batch.target));
    lua_setfield(L, -2, "target");
  }
}

namespace {

int reader_next(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check<ReaderBox>(L, lua_upvalueindex(1), "iter");
    std::optional<data::Batch> batch = box.reader ? box.reader->next() : std::nullopt;
    if (!batch) {
      box.reader.reset();  // stop the workers as soon as the loop ends
      lua_pushnil(L);
      return 1;
    }
    push_batch(L, *batch);
    return 1;
  });
}

// for batch in ds:iter{epoch = 1, seed = 0, skip = 0} do ... end
// skip: samples of that epoch already consumed; the iterator resumes right after them.
int p_iter(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "iter");
    Options o(L, 2, "iter", {"epoch", "seed", "skip"});
    const int64_t epoch = o.integer("epoch", 1);
    if (epoch < 1) throw ArgumentError("iter: epoch is 1-based");
    const int64_t skip = o.integer("skip", 0);
    if (skip < 0) throw ArgumentError("iter: skip must be >= 0");
    push_new<ReaderBox>(L, ReaderBox{std::make_unique<data::EpochReader>(
                               p, static_cast<uint64_t>(o.integer("seed", 0)), epoch - 1, skip)});
    lua_pushcclosure(L, reader_next, 1);
    return 1;
  });
}

const Binding kPipelineMethods[] = {
    {"map", p_map},     {"shuffle", p_shuffle}, {"batch", p_batch},       {"take", p_take},
    {"shard", p_shard}, {"split", p_split},     {"prefetch", p_prefetch}, {"workers", p_workers},
    {"size", p_size},   {"iter", p_iter},       {nullptr, nullptr}};
const luaL_Reg kPipelineMeta[] = {
    {"__len", p_size}, {"__tostring", p_tostring}, {nullptr, nullptr}};

}  // namespace

int open_data(lua_State* L) {
  require_library(L, "torch");
  define_type(L, PipelineBox::kTypeName, kPipelineMethods, kPipelineMeta, gc_userdata<PipelineBox>);
  extend_type(L, PipelineBox::kTypeName, csv_pipeline_methods(), nullptr);
  define_type(L, TransformBox::kTypeName, nullptr, nullptr, gc_userdata<TransformBox>);
  define_type(L, ReaderBox::kTypeName, nullptr, nullptr, gc_userdata<ReaderBox>);
  lua_newtable(L);
  for (const Binding* functions : {sources_functions(), csv_functions(), transforms_functions()}) {
    set_bindings(L, functions);
  }
  return 1;
}

}  // namespace engine::lua
