// Part of require 'nn.core': layers that change sizes, with PyTorch's arguments: transposed
// convolutions, pixel (un)shuffles, upsampling, padding, instance normalisation, and the 1-d and
// adaptive max pools that layers.cpp leaves out.
#include <torch/nn/functional/instancenorm.h>  // instancenorm.h uses it without including it
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/instancenorm.h>
#include <torch/nn/modules/padding.h>
#include <torch/nn/modules/pixelshuffle.h>
#include <torch/nn/modules/pooling.h>

#include "engine/lua/nn/nn_tables.hpp"

namespace engine::lua {
namespace {

namespace tnn = torch::nn;

// nn.ConvTranspose1d/2d/3d(in, out, k[, {stride, padding, output_padding, groups, bias,
// dilation}])
template <size_t D, class Impl, class Opts>
int conv_transpose(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const int64_t in = check_integer(L, 1, name), out = check_integer(L, 2, name);
    const auto kernel = size_list(L, 3, std::string(name) + ": kernel_size", D);
    Options o(L, 4, name, {"stride", "padding", "output_padding", "groups", "bias", "dilation"});
    const std::vector<int64_t> zeros(D, 0), ones(D, 1);
    Opts opts{in, out, torch::ExpandingArray<D>(kernel)};
    opts.stride(torch::ExpandingArray<D>(o.integers("stride", ones, D)))
        .padding(torch::ExpandingArray<D>(o.integers("padding", zeros, D)))
        .output_padding(torch::ExpandingArray<D>(o.integers("output_padding", zeros, D)))
        .dilation(torch::ExpandingArray<D>(o.integers("dilation", ones, D)))
        .groups(o.integer("groups", 1))
        .bias(o.boolean("bias", true));
    return push_layer<Impl>(L, opts);
  });
}
int l_conv_transpose1d(lua_State* L) {
  return conv_transpose<1, tnn::ConvTranspose1dImpl, tnn::ConvTranspose1dOptions>(
      L, "nn.ConvTranspose1d");
}
int l_conv_transpose2d(lua_State* L) {
  return conv_transpose<2, tnn::ConvTranspose2dImpl, tnn::ConvTranspose2dOptions>(
      L, "nn.ConvTranspose2d");
}
int l_conv_transpose3d(lua_State* L) {
  return conv_transpose<3, tnn::ConvTranspose3dImpl, tnn::ConvTranspose3dOptions>(
      L, "nn.ConvTranspose3d");
}

int l_pixel_shuffle(lua_State* L) {
  return guarded(L, [&] {
    return push_layer<tnn::PixelShuffleImpl>(
        L, tnn::PixelShuffleOptions(check_integer(L, 1, "nn.PixelShuffle")));
  });
}
int l_pixel_unshuffle(lua_State* L) {
  return guarded(L, [&] {
    return push_layer<tnn::PixelUnshuffleImpl>(
        L, tnn::PixelUnshuffleOptions(check_integer(L, 1, "nn.PixelUnshuffle")));
  });
}

// nn.Upsample{size = ... | scale_factor = ..., mode = 'nearest', align_corners = ...}
int l_upsample(lua_State* L) {
  const char* name = "nn.Upsample";
  return guarded(L, [&] {
    Options o(L, 1, name, {"size", "scale_factor", "mode", "align_corners"});
    if (o.has("size") == o.has("scale_factor"))
      throw ArgumentError(std::string(name) + ": give size or scale_factor (one of them)");
    std::vector<int64_t> size;
    if (o.has("size")) {
      o.push_field("size");
      size = integer_list(L, -1, std::string(name) + ": size");
      lua_pop(L, 1);
    }
    const auto scale =
        o.has("scale_factor") ? o.numbers("scale_factor", {}) : std::vector<double>{};
    const std::string mode = o.string("mode", "nearest");
    torch::nn::functional::InterpolateFuncOptions::mode_t kind = torch::kNearest;
    if (mode == "linear") {
      kind = torch::kLinear;
    } else if (mode == "bilinear") {
      kind = torch::kBilinear;
    } else if (mode == "bicubic") {
      kind = torch::kBicubic;
    } else if (mode == "trilinear") {
      kind = torch::kTrilinear;
    } else if (mode != "nearest") {
      throw ArgumentError(std::string(name) +
                          ": mode must be nearest, linear, bilinear, bicubic or trilinear");
    }
    c10::optional<bool> align_corners;
    if (o.has("align_corners")) align_corners = o.boolean("align_corners", false);
    return push_layer<nn::UpsampleImpl>(L, size, scale, kind, align_corners);
  });
}

// nn.ReflectionPad2d(p) and the like: p one number (every side) or PyTorch's list of sides
template <size_t D, class Impl, class Opts>
int padding(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const auto pads = size_list(L, 1, std::string(name) + ": padding", 2 * D);
    return push_layer<Impl>(L, Opts(torch::ExpandingArray<2 * D>(pads)));
  });
}
template <size_t D, class Impl, class Opts>
int constant_padding(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const auto pads = size_list(L, 1, std::string(name) + ": padding", 2 * D);
    return push_layer<Impl>(L, Opts(torch::ExpandingArray<2 * D>(pads), check_number(L, 2, name)));
  });
}
int l_reflection_pad1d(lua_State* L) {
  return padding<1, tnn::ReflectionPad1dImpl, tnn::ReflectionPad1dOptions>(L, "nn.ReflectionPad1d");
}
int l_reflection_pad2d(lua_State* L) {
  return padding<2, tnn::ReflectionPad2dImpl, tnn::ReflectionPad2dOptions>(L, "nn.ReflectionPad2d");
}
int l_replication_pad1d(lua_State* L) {
  return padding<1, tnn::ReplicationPad1dImpl, tnn::ReplicationPad1dOptions>(L,
                                                                             "nn.ReplicationPad1d");
}
int l_replication_pad2d(lua_State* L) {
  return padding<2, tnn::ReplicationPad2dImpl, tnn::ReplicationPad2dOptions>(L,
                                                                             "nn.ReplicationPad2d");
}
int l_zero_pad2d(lua_State* L) {
  return padding<2, tnn::ZeroPad2dImpl, tnn::ZeroPad2dOptions>(L, "nn.ZeroPad2d");
}
int l_constant_pad1d(lua_State* L) {
  return constant_padding<1, tnn::ConstantPad1dImpl, tnn::ConstantPad1dOptions>(L,
                                                                                "nn.ConstantPad1d");
}
int l_constant_pad2d(lua_State* L) {
  return constant_padding<2, tnn::ConstantPad2dImpl, tnn::ConstantPad2dOptions>(L,
                                                                                "nn.ConstantPad2d");
}

// nn.InstanceNorm1d/2d/3d(n[, {eps, momentum, affine = false, track_running_stats = false}])
template <class Impl>
int instance_norm(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const int64_t n = check_integer(L, 1, name);
    Options o(L, 2, name, {"eps", "momentum", "affine", "track_running_stats"});
    return push_layer<Impl>(L, tnn::InstanceNormOptions(n)
                                   .eps(o.number("eps", 1e-5))
                                   .momentum(o.number("momentum", 0.1))
                                   .affine(o.boolean("affine", false))
                                   .track_running_stats(o.boolean("track_running_stats", false)));
  });
}
int l_instance_norm1d(lua_State* L) {
  return instance_norm<tnn::InstanceNorm1dImpl>(L, "nn.InstanceNorm1d");
}
int l_instance_norm2d(lua_State* L) {
  return instance_norm<tnn::InstanceNorm2dImpl>(L, "nn.InstanceNorm2d");
}
int l_instance_norm3d(lua_State* L) {
  return instance_norm<tnn::InstanceNorm3dImpl>(L, "nn.InstanceNorm3d");
}

// nn.MaxPool1d(k[, {stride, padding, dilation, ceil_mode}]), nn.AvgPool1d(k[, {stride, padding,
// ceil_mode, count_include_pad}])
int l_maxpool1d(lua_State* L) {
  return guarded(L, [&] {
    const auto k = size_list(L, 1, "nn.MaxPool1d: kernel_size", 1);
    Options o(L, 2, "nn.MaxPool1d", {"stride", "padding", "dilation", "ceil_mode"});
    tnn::MaxPool1dOptions opts{torch::ExpandingArray<1>(k)};
    opts.stride(torch::ExpandingArray<1>(o.integers("stride", k, 1)))
        .padding(torch::ExpandingArray<1>(o.integers("padding", {0}, 1)))
        .dilation(torch::ExpandingArray<1>(o.integers("dilation", {1}, 1)))
        .ceil_mode(o.boolean("ceil_mode", false));
    return push_layer<tnn::MaxPool1dImpl>(L, opts);
  });
}
int l_avgpool1d(lua_State* L) {
  return guarded(L, [&] {
    const auto k = size_list(L, 1, "nn.AvgPool1d: kernel_size", 1);
    Options o(L, 2, "nn.AvgPool1d", {"stride", "padding", "ceil_mode", "count_include_pad"});
    tnn::AvgPool1dOptions opts{torch::ExpandingArray<1>(k)};
    opts.stride(torch::ExpandingArray<1>(o.integers("stride", k, 1)))
        .padding(torch::ExpandingArray<1>(o.integers("padding", {0}, 1)))
        .ceil_mode(o.boolean("ceil_mode", false))
        .count_include_pad(o.boolean("count_include_pad", true));
    return push_layer<tnn::AvgPool1dImpl>(L, opts);
  });
}
int l_adaptive_avgpool1d(lua_State* L) {
  return guarded(L, [&] {
    return push_layer<tnn::AdaptiveAvgPool1dImpl>(
        L, tnn::AdaptiveAvgPool1dOptions(check_integer(L, 1, "nn.AdaptiveAvgPool1d")));
  });
}
int l_adaptive_maxpool2d(lua_State* L) {
  return guarded(L, [&] {
    const auto s = size_list(L, 1, "nn.AdaptiveMaxPool2d: output_size", 2);
    return push_layer<tnn::AdaptiveMaxPool2dImpl>(
        L, tnn::AdaptiveMaxPool2dOptions(torch::ExpandingArrayWithOptionalElem<2>({s[0], s[1]})));
  });
}

const Binding kResizeLayers[] = {{"ConvTranspose1d", l_conv_transpose1d},
                                 {"ConvTranspose2d", l_conv_transpose2d},
                                 {"ConvTranspose3d", l_conv_transpose3d},
                                 {"PixelShuffle", l_pixel_shuffle},
                                 {"PixelUnshuffle", l_pixel_unshuffle},
                                 {"Upsample", l_upsample, "",
                                  "its arguments are one options table: nn.Upsample{scale_factor "
                                  "= 2, mode = 'bilinear'}"},
                                 {"ReflectionPad1d", l_reflection_pad1d},
                                 {"ReflectionPad2d", l_reflection_pad2d},
                                 {"ReplicationPad1d", l_replication_pad1d},
                                 {"ReplicationPad2d", l_replication_pad2d},
                                 {"ZeroPad2d", l_zero_pad2d},
                                 {"ConstantPad1d", l_constant_pad1d},
                                 {"ConstantPad2d", l_constant_pad2d},
                                 {"InstanceNorm1d", l_instance_norm1d},
                                 {"InstanceNorm2d", l_instance_norm2d},
                                 {"InstanceNorm3d", l_instance_norm3d},
                                 {"MaxPool1d", l_maxpool1d},
                                 {"AvgPool1d", l_avgpool1d},
                                 {"AdaptiveAvgPool1d", l_adaptive_avgpool1d},
                                 {"AdaptiveMaxPool2d", l_adaptive_maxpool2d},
                                 {nullptr, nullptr}};

}  // namespace

const Binding* resize_layer_functions() {
  return kResizeLayers;
}

}  // namespace engine::lua
