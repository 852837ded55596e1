// require 'data': sources, transforms and pipeline stages. Lua only declares pipelines; the
// samples flow through C++ worker threads. ds:iter() is the slow path for tests and tools.
#include <memory>

#include "engine/data/dataset_finder.hpp"
#include "engine/data/loader.hpp"
#include "engine/data/mnist.hpp"
#include "engine/data/synthetic.hpp"
#include "engine/lua/data_value.hpp"
#include "engine/lua/libraries.hpp"
#include "engine/lua/tensor_value.hpp"

namespace engine::lua {
namespace {

struct ReaderBox {
  static constexpr const char* kTypeName = "PipelineIterator";
  std::unique_ptr<data::EpochReader> reader;
};

data::Pipeline& pipeline(lua_State* L, const char* function) {
  return check<PipelineBox>(L, 1, function).pipeline;
}

int push_pipeline(lua_State* L, data::Pipeline p) {
  push_new<PipelineBox>(L, PipelineBox{std::move(p)});
  return 1;
}

std::string find(lua_State* L, const std::string& name) {
  return data::find_dataset(name, data::dataset_roots(Runtime::from(L).options().dataset_dirs));
}

int d_find(lua_State* L) {
  return guarded(L, [&] {
    const std::string path = find(L, check_string(L, 1, "data.find"));
    lua_pushstring(L, path.c_str());
    return 1;
  });
}

int d_mnist(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.mnist", {"root", "split"});
    const std::string root = o.has("root") ? o.string("root", "") : find(L, "mnist");
    auto source = data::load_mnist(root, o.string("split", "train"));
    return push_pipeline(L, data::Pipeline(source));
  });
}

// data.tensors{input = x, target = y}: samples along the first dimension of tensors in memory.
// Integer targets are 1-based classes, as everywhere in Lua.
int d_tensors(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.tensors", {"input", "target"});
    auto input = tensor_option(L, 1, "input", "data.tensors");
    if (!input.defined())
      throw ArgumentError("data.tensors: option 'input' (a tensor) is required");
    auto target = tensor_option(L, 1, "target", "data.tensors");
    if (target.defined() && target.scalar_type() == torch::kInt64) {
      if (target.numel() > 0 && target.min().item<int64_t>() < 1) {
        throw ArgumentError("data.tensors: class targets are 1-based, found " +
                            std::to_string(target.min().item<int64_t>()));
      }
      target = target - 1;
    }
    return push_pipeline(
        L, data::Pipeline(std::make_shared<data::TensorSource>(
               input.detach(), target.defined() ? target.detach() : target, "tensors")));
  });
}

// data.synthetic{shape = {3, 224, 224}, classes = 1000, size = 1024, seed = 0}
int d_synthetic(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.synthetic", {"shape", "classes", "size", "seed"});
    if (!o.has("shape")) throw ArgumentError("data.synthetic: option 'shape' is required");
    std::vector<int64_t> shape;
    for (double v : o.numbers("shape", {})) {
      if (v != static_cast<double>(static_cast<int64_t>(v))) {
        throw ArgumentError("data.synthetic: shape sizes must be integers, got " +
                            std::to_string(v));
      }
      shape.push_back(static_cast<int64_t>(v));
    }
    return push_pipeline(L, data::Pipeline(std::make_shared<data::SyntheticSource>(
                                shape, o.integer("classes", 10), o.integer("size", 1024),
                                static_cast<uint64_t>(o.integer("seed", 0)))));
  });
}

int d_normalize(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.normalize", {"mean", "std"});
    if (!o.has("mean") || !o.has("std"))
      throw ArgumentError("data.normalize: options 'mean' and 'std' are required");
    push_new<TransformBox>(L, TransformBox{std::make_shared<data::Normalize>(
                                  o.numbers("mean", {}), o.numbers("std", {}))});
    return 1;
  });
}

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

int reader_next(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check<ReaderBox>(L, lua_upvalueindex(1), "iter");
    std::optional<data::Batch> batch = box.reader ? box.reader->next() : std::nullopt;
    if (!batch) {
      box.reader.reset();  // stop the workers as soon as the loop ends
      lua_pushnil(L);
      return 1;
    }
    lua_createtable(L, 0, 2);
    push_tensor(L, batch->input);
    lua_setfield(L, -2, "input");
    if (batch->target.defined()) {
      // Class targets are 1-based in Lua.
      push_tensor(L,
                  batch->target.scalar_type() == torch::kInt64 ? batch->target + 1 : batch->target);
      lua_setfield(L, -2, "target");
    }
    return 1;
  });
}

// for batch in ds:iter{epoch = 1, seed = 0} do ... end
int p_iter(lua_State* L) {
  return guarded(L, [&] {
    auto& p = pipeline(L, "iter");
    Options o(L, 2, "iter", {"epoch", "seed"});
    const int64_t epoch = o.integer("epoch", 1);
    if (epoch < 1) throw ArgumentError("iter: epoch is 1-based");
    push_new<ReaderBox>(L, ReaderBox{std::make_unique<data::EpochReader>(
                               p, static_cast<uint64_t>(o.integer("seed", 0)), epoch - 1)});
    lua_pushcclosure(L, reader_next, 1);
    return 1;
  });
}

const luaL_Reg kPipelineMethods[] = {
    {"map", p_map},     {"shuffle", p_shuffle},   {"batch", p_batch},     {"take", p_take},
    {"shard", p_shard}, {"prefetch", p_prefetch}, {"workers", p_workers}, {"size", p_size},
    {"iter", p_iter},   {nullptr, nullptr}};
const luaL_Reg kPipelineMeta[] = {
    {"__len", p_size}, {"__tostring", p_tostring}, {nullptr, nullptr}};
const luaL_Reg kFunctions[] = {{"find", d_find},           {"mnist", d_mnist},
                               {"tensors", d_tensors},     {"synthetic", d_synthetic},
                               {"normalize", d_normalize}, {nullptr, nullptr}};

}  // namespace

int open_data(lua_State* L) {
  define_type(L, PipelineBox::kTypeName, kPipelineMethods, kPipelineMeta, gc_userdata<PipelineBox>);
  define_type(L, TransformBox::kTypeName, nullptr, nullptr, gc_userdata<TransformBox>);
  define_type(L, ReaderBox::kTypeName, nullptr, nullptr, gc_userdata<ReaderBox>);
  lua_newtable(L);
  luaL_setfuncs(L, kFunctions, 0);
  return 1;
}

}  // namespace engine::lua
