// require 'data': sources, transforms and pipeline stages. Lua only declares pipelines; the
// samples flow through C++ worker threads. ds:iter() is the slow path for tests and tools.
#include <cctype>
#include <filesystem>
#include <memory>

#include "engine/core/files.hpp"
#include "engine/core/format.hpp"
#include "engine/data/cifar.hpp"
#include "engine/data/dataset_finder.hpp"
#include "engine/data/hdf5_source.hpp"
#include "engine/data/image_codec.hpp"
#include "engine/data/image_folder.hpp"
#include "engine/data/image_transforms.hpp"
#include "engine/data/loader.hpp"
#include "engine/data/mnist.hpp"
#include "engine/data/synthetic.hpp"
#include "engine/data/tabular.hpp"
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

int push_transform(lua_State* L, std::shared_ptr<const data::Transform> t) {
  push_new<TransformBox>(L, TransformBox{std::move(t)});
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

int d_cifar10(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.cifar10", {"root", "split"});
    const std::string root = o.has("root") ? o.string("root", "") : find(L, "cifar10");
    return push_pipeline(L, data::Pipeline(data::load_cifar10(root, o.string("split", "train"))));
  });
}

int d_cifar100(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.cifar100", {"root", "split", "labels"});
    const std::string root = o.has("root") ? o.string("root", "") : find(L, "cifar100");
    return push_pipeline(L, data::Pipeline(data::load_cifar100(root, o.string("split", "train"),
                                                               o.string("labels", "fine"))));
  });
}

data::ColorMode color_mode(const Options& o, const char* function) {
  const std::string mode = o.string("mode", "rgb");
  if (mode != "rgb" && mode != "gray") {
    throw ArgumentError(std::string(function) + ": mode must be 'rgb' or 'gray', got '" + mode +
                        "'");
  }
  return mode == "rgb" ? data::ColorMode::kRgb : data::ColorMode::kGray;
}

// data.load_image(path, {mode = 'rgb' | 'gray'}): C x H x W float32 in [0, 1], as sources give
int d_load_image(lua_State* L) {
  return guarded(L, [&] {
    const std::string path = check_string(L, 1, "data.load_image");
    Options o(L, 2, "data.load_image", {"mode"});
    auto image = data::decode_image(core::read_file(path), color_mode(o, "data.load_image"), path);
    push_tensor(L, image.to(torch::kFloat32).div_(255.0));
    return 1;
  });
}

// data.save_image(path, image): PNG or JPEG by the path's extension; image C x H x W or H x W
// with 1 or 3 channels, float in [0, 1] (clamped) or uint8
int d_save_image(lua_State* L) {
  return guarded(L, [&] {
    const std::string path = check_string(L, 1, "data.save_image");
    torch::Tensor image = check_tensor(L, 2, "data.save_image");
    if (image.dim() == 2) image = image.unsqueeze(0);
    if (image.dim() != 3 || (image.size(0) != 1 && image.size(0) != 3)) {
      throw ArgumentError(
          "data.save_image: the image must be C x H x W with 1 or 3 channels, "
          "got a tensor of shape " +
          core::shape_string(image.sizes()));
    }
    image = image.to(torch::kCPU);
    if (image.scalar_type() != torch::kUInt8) {
      image = image.to(torch::kFloat32).clamp(0, 1).mul(255).round().to(torch::kUInt8);
    }
    image = image.contiguous();
    std::string ext = std::filesystem::path(path).extension().string();
    for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".png") {
      core::write_file(path, data::encode_png(image));
    } else if (ext == ".jpg" || ext == ".jpeg") {
      core::write_file(path, data::encode_jpeg(image));
    } else {
      throw ArgumentError("data.save_image: " + path +
                          ": the name must end in .png, .jpg or .jpeg");
    }
    return 0;
  });
}

// data.image_folder{root = dir, mode = 'rgb' | 'gray', skip_bad = false}
int d_image_folder(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.image_folder", {"root", "mode", "skip_bad"});
    if (!o.has("root")) throw ArgumentError("data.image_folder: option 'root' is required");
    data::ImageFolderOptions options;
    options.root = o.string("root", "");
    options.mode = color_mode(o, "data.image_folder");
    options.skip_bad = o.boolean("skip_bad", false);
    return push_pipeline(L, data::Pipeline(std::make_shared<data::ImageFolderSource>(options)));
  });
}

// data.hdf5{path = file, input = '/x', target = '/y'}
int d_hdf5(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.hdf5", {"path", "input", "target"});
    if (!o.has("path")) throw ArgumentError("data.hdf5: option 'path' is required");
    return push_pipeline(
        L, data::Pipeline(std::make_shared<data::Hdf5Source>(
               o.string("path", ""), o.string("input", "/x"), o.string("target", ""))));
  });
}

// ---- data.csv and its statistics -------------------------------------------------------------

const data::CsvSource* csv_source(const data::Pipeline& p) {
  return dynamic_cast<const data::CsvSource*>(&p.source());
}

// Field `key` of the table at `index` pushed raw (no metamethod can raise here).
void push_raw_field(lua_State* L, int index, const char* key) {
  lua_pushstring(L, key);
  lua_rawget(L, index < 0 ? index - 1 : index);
}

std::string string_field(lua_State* L, int index, const char* key, const std::string& what) {
  push_raw_field(L, index, key);
  if (lua_type(L, -1) != LUA_TSTRING) {
    lua_pop(L, 1);
    throw ArgumentError(what + ": field '" + key + "' must be a string");
  }
  std::string v = lua_tostring(L, -1);
  lua_pop(L, 1);
  return v;
}

double number_field(lua_State* L, int index, const char* key, const std::string& what) {
  push_raw_field(L, index, key);
  if (lua_type(L, -1) != LUA_TNUMBER) {
    lua_pop(L, 1);
    throw ArgumentError(what + ": field '" + key + "' must be a number");
  }
  const double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

std::vector<std::string> string_list_field(lua_State* L, int index, const char* key,
                                           const std::string& what) {
  push_raw_field(L, index, key);
  std::vector<std::string> out;
  if (lua_istable(L, -1)) {
    const size_t n = lua_objlen(L, -1);
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, static_cast<int>(i));
      if (lua_type(L, -1) == LUA_TSTRING) out.push_back(lua_tostring(L, -1));
      lua_pop(L, 1);
      if (out.size() != i) break;
    }
    if (out.size() != n) {
      lua_pop(L, 1);
      throw ArgumentError(what + ": field '" + key + "' must be a list of strings");
    }
  } else if (!lua_isnil(L, -1)) {
    lua_pop(L, 1);
    throw ArgumentError(what + ": field '" + key + "' must be a list of strings");
  }
  lua_pop(L, 1);
  return out;
}

void push_string_list(lua_State* L, const std::vector<std::string>& values) {
  lua_createtable(L, static_cast<int>(values.size()), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    lua_pushstring(L, values[i].c_str());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

// The statistics as a plain Lua table, which torch.save can store and data.csv{stats = ...}
// reads back:
//   {target = 'income', target_type = 'class', classes = {...},
//    numeric = {{name = 'age', mean = 38.6, std = 13.6}, ...},
//    categorical = {{name = 'workclass', values = {...}, cardinality = 9}, ...}}
// cardinality counts the out-of-vocabulary index: the embedding size a model needs.
void push_stats(lua_State* L, const data::TabularStats& stats) {
  lua_createtable(L, 0, 5);
  lua_pushstring(L, stats.target.c_str());
  lua_setfield(L, -2, "target");
  lua_pushstring(L, stats.class_target ? "class" : "float");
  lua_setfield(L, -2, "target_type");
  push_string_list(L, stats.classes);
  lua_setfield(L, -2, "classes");
  lua_createtable(L, static_cast<int>(stats.numeric.size()), 0);
  for (size_t j = 0; j < stats.numeric.size(); ++j) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, stats.numeric[j].name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushnumber(L, stats.numeric[j].mean);
    lua_setfield(L, -2, "mean");
    lua_pushnumber(L, stats.numeric[j].std);
    lua_setfield(L, -2, "std");
    lua_rawseti(L, -2, static_cast<int>(j + 1));
  }
  lua_setfield(L, -2, "numeric");
  lua_createtable(L, static_cast<int>(stats.categorical.size()), 0);
  for (size_t j = 0; j < stats.categorical.size(); ++j) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, stats.categorical[j].name.c_str());
    lua_setfield(L, -2, "name");
    push_string_list(L, stats.categorical[j].values);
    lua_setfield(L, -2, "values");
    lua_pushnumber(L, static_cast<double>(stats.categorical[j].values.size() + 1));
    lua_setfield(L, -2, "cardinality");
    lua_rawseti(L, -2, static_cast<int>(j + 1));
  }
  lua_setfield(L, -2, "categorical");
}

// Reads statistics from a csv pipeline or from a table shaped as push_stats writes it.
std::shared_ptr<const data::TabularStats> read_stats(lua_State* L, int index) {
  const std::string what = "data.csv: option 'stats'";
  if (auto* box = test<PipelineBox>(L, index)) {
    const auto* csv = csv_source(box->pipeline);
    if (!csv) throw ArgumentError(what + " must be a data.csv pipeline or a statistics table");
    return csv->stats();
  }
  if (!lua_istable(L, index)) {
    throw ArgumentError(what + " must be a data.csv pipeline or a statistics table, got " +
                        type_name(L, index));
  }
  auto stats = std::make_shared<data::TabularStats>();
  stats->target = string_field(L, index, "target", what);
  stats->class_target = string_field(L, index, "target_type", what) == "class";
  stats->classes = string_list_field(L, index, "classes", what);
  for (const char* part : {"numeric", "categorical"}) {
    push_raw_field(L, index, part);
    const int list = lua_gettop(L);
    const size_t n = lua_istable(L, list) ? lua_objlen(L, list) : 0;
    for (size_t j = 1; j <= n; ++j) {
      lua_rawgeti(L, list, static_cast<int>(j));
      const std::string item = what + " " + part + "[" + std::to_string(j) + "]";
      if (!lua_istable(L, -1)) {
        lua_settop(L, list - 1);
        throw ArgumentError(item + " must be a table");
      }
      try {
        if (std::string(part) == "numeric") {
          stats->numeric.push_back({string_field(L, -1, "name", item),
                                    number_field(L, -1, "mean", item),
                                    number_field(L, -1, "std", item)});
        } else {
          stats->categorical.push_back(
              {string_field(L, -1, "name", item), string_list_field(L, -1, "values", item)});
        }
      } catch (...) {
        lua_settop(L, list - 1);
        throw;
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return stats;
}

// data.csv{path, target, numeric = {...}, categorical = {...}, header = true, delimiter = ',',
//          target_type = 'class' | 'float', missing = 'error' | 'fill' | 'skip', na = {...},
//          skip_bad = false, stats = train_pipeline_or_table}
int d_csv(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.csv",
              {"path", "target", "numeric", "categorical", "header", "delimiter", "target_type",
               "missing", "na", "skip_bad", "stats"});
    if (!o.has("path")) throw ArgumentError("data.csv: option 'path' is required");
    data::CsvOptions options;
    options.path = o.string("path", "");
    if (auto target = o.strings("target")) {
      if (target->size() != 1) throw ArgumentError("data.csv: option 'target' is one column");
      options.target = target->front();
    }
    options.numeric = o.strings("numeric");
    options.categorical = o.strings("categorical");
    options.header = o.boolean("header", true);
    const std::string delimiter = o.string("delimiter", ",");
    if (delimiter.size() != 1 || delimiter == "\"" || delimiter == "\n") {
      throw ArgumentError("data.csv: delimiter must be one character, got '" + delimiter + "'");
    }
    options.delimiter = delimiter[0];
    const std::string target_type = o.string("target_type", "class");
    if (target_type != "class" && target_type != "float") {
      throw ArgumentError("data.csv: target_type must be 'class' or 'float', got '" + target_type +
                          "'");
    }
    options.class_target = target_type == "class";
    const std::string missing = o.string("missing", "error");
    if (missing == "error") {
      options.missing = data::MissingValues::kError;
    } else if (missing == "fill") {
      options.missing = data::MissingValues::kFill;
    } else if (missing == "skip") {
      options.missing = data::MissingValues::kSkip;
    } else {
      throw ArgumentError("data.csv: missing must be 'error', 'fill' or 'skip', got '" + missing +
                          "'");
    }
    if (auto na = o.strings("na")) options.na = *na;
    options.skip_bad = o.boolean("skip_bad", false);
    if (o.has("stats")) {
      o.push_field("stats");
      const int index = lua_gettop(L);
      try {
        options.stats = read_stats(L, index);
      } catch (...) {
        lua_settop(L, index - 1);
        throw;
      }
      lua_pop(L, 1);
    }
    return push_pipeline(L, data::Pipeline(std::make_shared<data::CsvSource>(options)));
  });
}

int p_stats(lua_State* L) {
  return guarded(L, [&] {
    const auto* csv = csv_source(pipeline(L, "stats"));
    if (!csv) throw ArgumentError("stats: only data.csv pipelines have statistics");
    push_stats(L, *csv->stats());
    return 1;
  });
}

// ds:classes(): class names of image folders (folder names) and CSV class targets.
int p_classes(lua_State* L) {
  return guarded(L, [&] {
    const auto& p = pipeline(L, "classes");
    if (const auto* csv = csv_source(p)) {
      push_string_list(L, csv->stats()->classes);
    } else if (const auto* folder = dynamic_cast<const data::ImageFolderSource*>(&p.source())) {
      push_string_list(L, folder->classes());
    } else {
      throw ArgumentError("classes: only data.image_folder and data.csv pipelines name classes");
    }
    return 1;
  });
}

int d_normalize(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.normalize", {"mean", "std"});
    if (!o.has("mean") || !o.has("std"))
      throw ArgumentError("data.normalize: options 'mean' and 'std' are required");
    return push_transform(
        L, std::make_shared<data::Normalize>(o.numbers("mean", {}), o.numbers("std", {})));
  });
}

// A size argument: n (n x n) or {height, width}.
data::Size2 size_argument(lua_State* L, int index, const char* function) {
  const auto v = size_list(L, index, std::string(function) + ": size", 2);
  return {v[0], v[1]};
}

// data.resize(n): the smaller edge to n, keeping the aspect ratio; data.resize{h, w}: exactly.
int d_resize(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) == LUA_TNUMBER) {
      return push_transform(L, std::make_shared<data::Resize>(check_integer(L, 1, "data.resize")));
    }
    return push_transform(L, std::make_shared<data::Resize>(size_argument(L, 1, "data.resize")));
  });
}

int d_center_crop(lua_State* L) {
  return guarded(L, [&] {
    return push_transform(
        L, std::make_shared<data::CenterCrop>(size_argument(L, 1, "data.center_crop")));
  });
}

// data.random_crop(size[, {padding = 0}])
int d_random_crop(lua_State* L) {
  return guarded(L, [&] {
    const auto size = size_argument(L, 1, "data.random_crop");
    Options o(L, 2, "data.random_crop", {"padding"});
    return push_transform(L, std::make_shared<data::RandomCrop>(size, o.integer("padding", 0)));
  });
}

// data.random_resized_crop(size[, {scale = {0.08, 1}, ratio = {3/4, 4/3}}])
int d_random_resized_crop(lua_State* L) {
  return guarded(L, [&] {
    const auto size = size_argument(L, 1, "data.random_resized_crop");
    Options o(L, 2, "data.random_resized_crop", {"scale", "ratio"});
    const auto scale = o.numbers("scale", {0.08, 1.0});
    const auto ratio = o.numbers("ratio", {3.0 / 4.0, 4.0 / 3.0});
    if (scale.size() != 2 || ratio.size() != 2) {
      throw ArgumentError("data.random_resized_crop: scale and ratio are {min, max} pairs");
    }
    return push_transform(
        L, std::make_shared<data::RandomResizedCrop>(size, scale[0], scale[1], ratio[0], ratio[1]));
  });
}

// data.random_flip{p = 0.5, vertical = false}
int d_random_flip(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.random_flip", {"p", "vertical"});
    return push_transform(
        L, std::make_shared<data::RandomFlip>(o.number("p", 0.5), o.boolean("vertical", false)));
  });
}

int d_to_float(lua_State* L) {
  return guarded(L, [&] { return push_transform(L, std::make_shared<data::ToFloat>()); });
}

int d_one_hot(lua_State* L) {
  return guarded(L, [&] {
    return push_transform(L, std::make_shared<data::OneHot>(check_integer(L, 1, "data.one_hot")));
  });
}

// data.compose{t1, t2, ...}
int d_compose(lua_State* L) {
  return guarded(L, [&] {
    if (!lua_istable(L, 1)) {
      throw ArgumentError("data.compose expects a list of transforms, got " + type_name(L, 1));
    }
    std::vector<std::shared_ptr<const data::Transform>> parts;
    const size_t n = lua_objlen(L, 1);
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, 1, static_cast<int>(i));
      auto* t = test<TransformBox>(L, -1);
      const std::string got = t ? "" : found_instead<TransformBox>(L, -1);
      lua_pop(L, 1);
      if (!t) {
        throw ArgumentError("data.compose: element " + std::to_string(i) +
                            " is not a transform (got " + got + ")");
      }
      parts.push_back(t->transform);
    }
    return push_transform(L, std::make_shared<data::Compose>(std::move(parts)));
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

}  // namespace

void push_batch(lua_State* L, const data::Batch& batch) {
  lua_createtable(L, 0, 3);
  push_tensor(L, batch.input);
  lua_setfield(L, -2, "input");
  if (batch.target.defined()) {
    // Class targets are 1-based in Lua.
    push_tensor(L, batch.target.scalar_type() == torch::kInt64 ? batch.target + 1 : batch.target);
    lua_setfield(L, -2, "target");
  }
  if (batch.categorical.defined()) {
    push_tensor(L, batch.categorical + 1);  // 1-based, as nn.Embedding takes them
    lua_setfield(L, -2, "categorical");
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

const luaL_Reg kPipelineMethods[] = {
    {"map", p_map},     {"shuffle", p_shuffle},   {"batch", p_batch},     {"take", p_take},
    {"shard", p_shard}, {"prefetch", p_prefetch}, {"workers", p_workers}, {"size", p_size},
    {"iter", p_iter},   {"stats", p_stats},       {"classes", p_classes}, {nullptr, nullptr}};
const luaL_Reg kPipelineMeta[] = {
    {"__len", p_size}, {"__tostring", p_tostring}, {nullptr, nullptr}};
const luaL_Reg kFunctions[] = {{"find", d_find},
                               {"mnist", d_mnist},
                               {"cifar10", d_cifar10},
                               {"cifar100", d_cifar100},
                               {"csv", d_csv},
                               {"image_folder", d_image_folder},
                               {"load_image", d_load_image},
                               {"save_image", d_save_image},
                               {"hdf5", d_hdf5},
                               {"tensors", d_tensors},
                               {"synthetic", d_synthetic},
                               {"normalize", d_normalize},
                               {"resize", d_resize},
                               {"center_crop", d_center_crop},
                               {"random_crop", d_random_crop},
                               {"random_resized_crop", d_random_resized_crop},
                               {"random_flip", d_random_flip},
                               {"to_float", d_to_float},
                               {"one_hot", d_one_hot},
                               {"compose", d_compose},
                               {nullptr, nullptr}};

}  // namespace

int open_data(lua_State* L) {
  require_library(L, "torch");
  define_type(L, PipelineBox::kTypeName, kPipelineMethods, kPipelineMeta, gc_userdata<PipelineBox>);
  define_type(L, TransformBox::kTypeName, nullptr, nullptr, gc_userdata<TransformBox>);
  define_type(L, ReaderBox::kTypeName, nullptr, nullptr, gc_userdata<ReaderBox>);
  lua_newtable(L);
  luaL_setfuncs(L, kFunctions, 0);
  return 1;
}

}  // namespace engine::lua
