// Part of require 'data': the sources (data.mnist, cifar10/100, tensors, synthetic, image_folder,
// hdf5), data.find, and loading and saving single images.
#include <cctype>
#include <filesystem>
#include <memory>

#include "engine/core/files.hpp"
#include "engine/core/format.hpp"
#include "engine/core/numbers.hpp"
#include "engine/data/caffe_lmdb.hpp"
#include "engine/data/cifar.hpp"
#include "engine/data/hdf5_source.hpp"
#include "engine/data/image_codec.hpp"
#include "engine/data/image_folder.hpp"
#include "engine/data/mnist.hpp"
#include "engine/data/synthetic.hpp"
#include "engine/lua/data/data_tables.hpp"

namespace engine::lua {
namespace {

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

// Option `inputs` of the table at `index`: {name = value, ...} for further named inputs, each
// value read by `read` (at the top of the stack). Names are strings other than the batch's own
// fields (input, target, categorical).
template <typename Read>
auto named_inputs_option(lua_State* L, int index, const char* function, Read read) {
  std::map<std::string, decltype(read(std::string()))> out;
  StackGuard guard(L);
  lua_getfield(L, index, "inputs");
  if (lua_isnil(L, -1)) return out;
  if (!lua_istable(L, -1)) {
    throw ArgumentError(std::string(function) +
                        ": option 'inputs' must be a table of named inputs, got " +
                        type_name(L, -1));
  }
  const int table = lua_gettop(L);
  for (lua_pushnil(L); lua_next(L, table) != 0; lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      throw ArgumentError(std::string(function) +
                          ": option 'inputs' takes names as keys ({text = ...}), got a " +
                          type_name(L, -2) + " key");
    }
    const std::string name = lua_tostring(L, -2);
    if (name == "input" || name == "target" || name == "categorical") {
      throw ArgumentError(std::string(function) + ": inputs." + name +
                          ": a batch's own field; name the further input otherwise");
    }
    out.emplace(name, read(name));
  }
  return out;
}

// data.tensors{input = x, target = y, inputs = {text = t}}: samples along the first dimension
// of tensors in memory. Integer targets are 1-based classes, as everywhere in Lua.
int d_tensors(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.tensors", {"input", "target", "inputs"});
    auto inputs = named_inputs_option(L, 1, "data.tensors", [&](const std::string& name) {
      torch::Tensor* t = test_tensor(L, -1);
      if (!t) {
        throw ArgumentError("data.tensors: inputs." + name + " must be a tensor, got " +
                            type_name(L, -1));
      }
      return t->detach();
    });
    auto input = tensor_option(L, 1, "input", "data.tensors");
    if (!input.defined())
      throw ArgumentError("data.tensors: option 'input' (a tensor) is required");
    auto target = tensor_option(L, 1, "target", "data.tensors");
    if (target.defined() && target.scalar_type() == torch::kInt64 && target.numel() > 0 &&
        target.min().item<int64_t>() < 1) {
      throw ArgumentError("data.tensors: class targets are 1-based, found " +
                          std::to_string(target.min().item<int64_t>()));
    }
    target = nn::zero_based_classes(target);  // checked here, where the classes enter
    return push_pipeline(L, data::Pipeline(std::make_shared<data::TensorSource>(
                                input.detach(), target.defined() ? target.detach() : target,
                                "tensors", std::move(inputs))));
  });
}

// data.synthetic{shape = {3, 224, 224}, classes = 1000, size = 1024, seed = 0}
int d_synthetic(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.synthetic", {"shape", "classes", "size", "seed"});
    if (!o.has("shape")) throw ArgumentError("data.synthetic: option 'shape' is required");
    std::vector<int64_t> shape;
    for (double v : o.numbers("shape", {})) {
      const auto size = core::exact_int64(v);
      if (!size) {
        throw ArgumentError("data.synthetic: shape sizes must be integers, got " +
                            core::number_string(v));
      }
      shape.push_back(*size);
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
      // torchvision's save_image: x * 255 + 0.5, clamped, truncated
      image = image.to(torch::kFloat32).mul(255).add_(0.5).clamp_(0, 255).to(torch::kUInt8);
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

// data.caffe_lmdb{root = dir, mode = 'rgb' | 'gray'}: a Caffe LMDB image dataset
int d_caffe_lmdb(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.caffe_lmdb", {"root", "mode"});
    if (!o.has("root")) throw ArgumentError("data.caffe_lmdb: option 'root' is required");
    return push_pipeline(L, data::Pipeline(std::make_shared<data::CaffeLmdbSource>(
                                o.string("root", ""), color_mode(o, "data.caffe_lmdb"))));
  });
}

// data.hdf5{path = file, input = '/x', target = '/y'}
int d_hdf5(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.hdf5", {"path", "input", "target", "inputs"});
    if (!o.has("path")) throw ArgumentError("data.hdf5: option 'path' is required");
    const auto inputs = named_inputs_option(L, 1, "data.hdf5", [&](const std::string& name) {
      if (lua_type(L, -1) != LUA_TSTRING) {
        throw ArgumentError("data.hdf5: inputs." + name +
                            " must be a dataset path ('/tokens'), got " + type_name(L, -1));
      }
      return std::string(lua_tostring(L, -1));
    });
    return push_pipeline(
        L, data::Pipeline(std::make_shared<data::Hdf5Source>(
               o.string("path", ""), o.string("input", "/x"), o.string("target", ""), inputs)));
  });
}

const Binding kSourceFunctions[] = {{"find", d_find},
                                    {"mnist", d_mnist},
                                    {"cifar10", d_cifar10},
                                    {"cifar100", d_cifar100},
                                    {"image_folder", d_image_folder},
                                    {"caffe_lmdb", d_caffe_lmdb},
                                    {"load_image", d_load_image},
                                    {"save_image", d_save_image},
                                    {"hdf5", d_hdf5},
                                    {"tensors", d_tensors},
                                    {"synthetic", d_synthetic},
                                    {nullptr, nullptr}};

}  // namespace

const Binding* sources_functions() {
  return kSourceFunctions;
}

}  // namespace engine::lua
