// Part of require 'data': the transforms (normalize, resize, crops, flips, to_float, one_hot,
// compose), each run by the loader's workers in C++.
#include <memory>

#include "engine/data/image_transforms.hpp"
#include "engine/lua/data/data_tables.hpp"

namespace engine::lua {
namespace {

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

const Binding kTransformFunctions[] = {{"normalize", d_normalize},
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

const Binding* transforms_functions() {
  return kTransformFunctions;
}

}  // namespace engine::lua
