#include "engine/data/image_resample.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace engine::data {
namespace {

// For each output position along one axis: the first input index and `taps` weights (the same
// count everywhere: windows are shifted inside the input and padded with zero weights, so the
// inner loops have a fixed length).
struct Taps {
  std::vector<int64_t> first;
  std::vector<float> weights;  // taps per output position
  int64_t taps = 0;
};

Taps make_taps(int64_t in, int64_t out) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double support = std::max(scale, 1.0);  // half-width of the stretched triangle
  const double inverse = 1.0 / std::max(scale, 1.0);
  Taps t;
  t.taps = std::min<int64_t>(static_cast<int64_t>(std::ceil(support)) * 2 + 1, in);
  t.first.resize(static_cast<size_t>(out));
  t.weights.assign(static_cast<size_t>(out * t.taps), 0.0f);
  std::vector<double> w;
  for (int64_t i = 0; i < out; ++i) {
    const double center = (static_cast<double>(i) + 0.5) * scale;
    const auto lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const auto hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in);
    double total = 0;
    w.assign(static_cast<size_t>(std::max<int64_t>(hi - lo, 0)), 0.0);
    for (int64_t k = lo; k < hi; ++k) {
      const double x = (static_cast<double>(k) - center + 0.5) * inverse;
      w[static_cast<size_t>(k - lo)] = std::max(0.0, 1.0 - std::abs(x));
      total += w[static_cast<size_t>(k - lo)];
    }
    const int64_t first = std::min(lo, in - t.taps);
    t.first[static_cast<size_t>(i)] = first;
    for (int64_t k = lo; k < hi; ++k) {
      t.weights[static_cast<size_t>(i * t.taps + (k - first))] =
          static_cast<float>(total > 0 ? w[static_cast<size_t>(k - lo)] / total : 0.0);
    }
  }
  return t;
}

// Four floats in one SSE register (GCC's and Clang's vector extension).
using Float4 = float __attribute__((vector_size(16)));
using Int4 = int32_t __attribute__((vector_size(16)));

// Four interleaved rows (quad) filtered to n <= 4 output rows of out_w; TAPS > 0 fixes the tap
// count at compile time.
template <int64_t TAPS>
void filter_quad(const float* quad, const Taps& t, int64_t out_w, int64_t n, float* out) {
  const int64_t taps = TAPS > 0 ? TAPS : t.taps;
  const float* w = t.weights.data();
  for (int64_t x = 0; x < out_w; ++x, w += taps) {
    const float* s = quad + t.first[static_cast<size_t>(x)] * 4;
    Float4 sum = {0, 0, 0, 0};
    for (int64_t k = 0; k < taps; ++k) {
      Float4 v;
      std::memcpy(&v, s + k * 4, sizeof v);
      sum += w[k] * v;
    }
    for (int64_t r = 0; r < n; ++r) out[r * out_w + x] = sum[r];
  }
}

template <class In, class Out>
void resample_plane(const In* in, int64_t row_stride, int64_t col_stride, int64_t in_h,
                    int64_t in_w, const Taps& horizontal, const Taps& vertical, int64_t out_h,
                    int64_t out_w, std::vector<float>& rows, Out* out) {
  // horizontal pass: input rows to out_w columns, four rows at a time: the rows are
  // interleaved as floats (x0 of rows 0-3, x1 of rows 0-3, ...) so that each tap is one
  // four-wide multiply-add, the weights being the same for every row
  rows.resize(static_cast<size_t>(in_h * out_w + 4 * in_w + out_w));
  float* quad = rows.data() + in_h * out_w;
  float* acc = quad + 4 * in_w;
  const int64_t taps = horizontal.taps;
  for (int64_t y0 = 0; y0 < in_h; y0 += 4) {
    const int64_t n = std::min<int64_t>(4, in_h - y0);
    for (int64_t r = 0; r < 4; ++r) {
      const In* row = in + (y0 + std::min(r, n - 1)) * row_stride;  // repeat the last row
      for (int64_t x = 0; x < in_w; ++x) quad[x * 4 + r] = static_cast<float>(row[x * col_stride]);
    }
    if (taps == 3) {  // enlarging, the common case: a loop the compiler unrolls
      filter_quad<3>(quad, horizontal, out_w, n, rows.data() + y0 * out_w);
    } else {
      filter_quad<0>(quad, horizontal, out_w, n, rows.data() + y0 * out_w);
    }
  }
  // vertical pass: whole rows at a time, which the compiler vectorises
  for (int64_t y = 0; y < out_h; ++y) {
    std::fill(acc, acc + out_w, 0.0f);
    const float* w = vertical.weights.data() + y * vertical.taps;
    const int64_t first = vertical.first[static_cast<size_t>(y)];
    for (int64_t k = 0; k < vertical.taps; ++k) {
      const float* src = rows.data() + (first + k) * out_w;
      const float wk = w[k];
      if (wk == 0.0f) continue;
      for (int64_t x = 0; x < out_w; ++x) acc[x] += wk * src[x];
    }
    Out* dst = out + y * out_w;
    int64_t x = 0;
    if constexpr (std::is_same_v<Out, uint8_t>) {
      // four at a time: clamp, + 0.5 and truncate (rounding without a libm call; ties round
      // up, not to even)
      const Float4 low = {0, 0, 0, 0}, high = {255, 255, 255, 255}, half = {0.5f, 0.5f, 0.5f, 0.5f};
      for (; x + 4 <= out_w; x += 4) {
        Float4 v;
        std::memcpy(&v, acc + x, sizeof v);
        v = v < low ? low : v;
        v = v > high ? high : v;
        const auto i = __builtin_convertvector(v + half, Int4);
        for (int r = 0; r < 4; ++r) dst[x + r] = static_cast<uint8_t>(i[r]);
      }
    }
    for (; x < out_w; ++x) {
      if constexpr (std::is_same_v<Out, uint8_t>) {
        // + 0.5 and truncate: rounding without a libm call (ties round up, not to even)
        // (min/max rather than std::clamp, whose branches keep the loop from vectorising)
        const auto v = static_cast<int32_t>(std::min(std::max(acc[x], 0.0f), 255.0f) + 0.5f);
        dst[x] = static_cast<uint8_t>(v);
      } else {
        dst[x] = acc[x];
      }
    }
  }
}

}  // namespace

torch::Tensor resample_bilinear(const torch::Tensor& image, int64_t height, int64_t width) {
  const int64_t in_h = image.size(-2), in_w = image.size(-1);
  const auto planes_view = image.reshape({-1, in_h, in_w});  // a view for crops of C x H x W
  auto shape = image.sizes().vec();
  shape[shape.size() - 2] = height;
  shape.back() = width;
  const bool bytes = image.scalar_type() == torch::kUInt8;
  auto input = bytes ? planes_view : planes_view.to(torch::kFloat32);
  auto out = torch::empty(shape, image.options().dtype(bytes ? torch::kUInt8 : torch::kFloat32));
  const auto horizontal = make_taps(in_w, width);
  const auto vertical = make_taps(in_h, height);
  std::vector<float> rows;
  const int64_t planes = input.size(0);
  for (int64_t p = 0; p < planes; ++p) {
    if (bytes) {
      resample_plane(input.data_ptr<uint8_t>() + p * input.stride(0), input.stride(1),
                     input.stride(2), in_h, in_w, horizontal, vertical, height, width, rows,
                     out.data_ptr<uint8_t>() + p * height * width);
    } else {
      resample_plane(input.data_ptr<float>() + p * input.stride(0), input.stride(1),
                     input.stride(2), in_h, in_w, horizontal, vertical, height, width, rows,
                     out.data_ptr<float>() + p * height * width);
    }
  }
  return image.is_floating_point() && image.scalar_type() != torch::kFloat32
             ? out.to(image.scalar_type())
             : out;
}

}  // namespace engine::data
