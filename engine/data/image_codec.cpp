#include "engine/data/image_codec.hpp"

#include <png.h>
#include <turbojpeg.h>

#include <cstring>
#include <memory>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::data {
namespace {

// One TurboJPEG instance per thread and direction: they are not thread-safe, and cheap to keep.
struct TjHandle {
  explicit TjHandle(tjhandle h) : handle(h) {}
  ~TjHandle() {
    if (handle) tjDestroy(handle);
  }
  tjhandle handle;
};

TjHandle& decompressor_slot() {
  thread_local TjHandle h(nullptr);
  return h;
}

tjhandle decompressor() {
  auto& h = decompressor_slot();
  if (!h.handle) h.handle = tjInitDecompress();
  if (!h.handle) throw core::DataError("cannot start the JPEG decoder");
  return h.handle;
}

// A decoder that failed may keep state from the bad image (libjpeg-turbo 2.1 then rejects
// the next good one): start afresh.
[[noreturn]] void fail_decoding(const std::string& message) {
  auto& h = decompressor_slot();
  if (h.handle) tjDestroy(h.handle);
  h.handle = nullptr;
  throw core::DataError(message);
}

tjhandle compressor() {
  thread_local TjHandle h(tjInitCompress());
  if (!h.handle) throw core::DataError("cannot start the JPEG encoder");
  return h.handle;
}

bool is_jpeg(const std::vector<uint8_t>& b) {
  return b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF;
}

bool is_png(const std::vector<uint8_t>& b) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  return b.size() >= 8 && std::memcmp(b.data(), kSignature, 8) == 0;
}

// The size an image's header declares, checked before its pixels are allocated: a corrupt or
// hostile header can declare gigapixels in a few bytes. 2^28 pixels (16384 x 16384) is far
// beyond any training image; a PNG's pixels (at least one bit each) pass through deflate, which
// packs at most 1032 bytes into one, so the file's size bounds them too.
void check_declared_size(int64_t width, int64_t height, size_t file_size, bool deflated,
                         const std::string& what) {
  constexpr int64_t kMostPixels = int64_t{1} << 28;
  constexpr int64_t kMostDeflateRatio = 1032;
  const int64_t pixels = width * height;
  if (width < 1 || height < 1 || pixels > kMostPixels ||
      (deflated && pixels / 8 / kMostDeflateRatio > static_cast<int64_t>(file_size))) {
    throw core::DataError(what + ": the image declares " + std::to_string(width) + " x " +
                          std::to_string(height) + " pixels, more than its " +
                          std::to_string(file_size) +
                          " bytes can hold or than the engine decodes (2^28 pixels)");
  }
}

torch::Tensor decode_jpeg(const std::vector<uint8_t>& bytes, ColorMode mode,
                          const std::string& what) {
  tjhandle h = decompressor();
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  const auto size = static_cast<unsigned long>(bytes.size());
  if (tjDecompressHeader3(h, bytes.data(), size, &width, &height, &subsampling, &colorspace) != 0) {
    fail_decoding(what + ": not a readable JPEG (" + tjGetErrorStr2(h) + ")");
  }
  const int channels = mode == ColorMode::kRgb ? 3 : 1;
  check_declared_size(width, height, bytes.size(), false, what);
  auto image = torch::empty({height, width, channels}, torch::kUInt8);
  // Warnings (a truncated file, corrupt data) are errors: a half-grey image is not a sample.
  if (tjDecompress2(h, bytes.data(), size, image.data_ptr<uint8_t>(), width, 0, height,
                    mode == ColorMode::kRgb ? TJPF_RGB : TJPF_GRAY, TJFLAG_STOPONWARNING) != 0) {
    fail_decoding(what + ": corrupt or truncated JPEG (" + tjGetErrorStr2(h) + ")");
  }
  // a view: resizing reads it in place, and batching makes it contiguous
  return image.permute({2, 0, 1});
}

torch::Tensor decode_png(const std::vector<uint8_t>& bytes, ColorMode mode,
                         const std::string& what) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  // png_image_free runs on every path out (it is a no-op once finish_read has cleaned up)
  std::unique_ptr<png_image, void (*)(png_imagep)> guard(&image, png_image_free);
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
    throw core::DataError(what + ": not a readable PNG (" + image.message + ")");
  }
  image.format = mode == ColorMode::kRgb ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  const int channels = mode == ColorMode::kRgb ? 3 : 1;
  check_declared_size(image.width, image.height, bytes.size(), true, what);
  auto out = torch::empty({image.height, image.width, channels}, torch::kUInt8);
  if (!png_image_finish_read(&image, nullptr, out.data_ptr<uint8_t>(), 0, nullptr)) {
    throw core::DataError(what + ": corrupt or truncated PNG (" + image.message + ")");
  }
  return out.permute({2, 0, 1});
}

// H x W x C contiguous bytes of a C x H x W uint8 image with 1 or 3 channels.
torch::Tensor interleaved(const torch::Tensor& image, const char* what) {
  if (image.dim() != 3 || (image.size(0) != 1 && image.size(0) != 3) ||
      image.scalar_type() != torch::kUInt8) {
    throw core::UsageError(std::string(what) +
                           ": expects a C x H x W uint8 image with 1 or 3 "
                           "channels, got " +
                           std::string(c10::toString(image.scalar_type())) + " " +
                           core::shape_string(image.sizes()));
  }
  return image.permute({1, 2, 0}).contiguous();
}

}  // namespace

torch::Tensor decode_image(const std::vector<uint8_t>& bytes, ColorMode mode,
                           const std::string& what) {
  if (is_jpeg(bytes)) return decode_jpeg(bytes, mode, what);
  if (is_png(bytes)) return decode_png(bytes, mode, what);
  if (bytes.empty()) throw core::DataError(what + ": empty file");
  throw core::DataError(what + ": neither a JPEG nor a PNG image");
}

std::vector<uint8_t> encode_jpeg(const torch::Tensor& image, int quality) {
  const auto hwc = interleaved(image, "encode_jpeg");
  const bool gray = image.size(0) == 1;
  tjhandle h = compressor();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (tjCompress2(h, hwc.data_ptr<uint8_t>(), static_cast<int>(hwc.size(1)), 0,
                  static_cast<int>(hwc.size(0)), gray ? TJPF_GRAY : TJPF_RGB, &out, &size,
                  gray ? TJSAMP_GRAY : TJSAMP_420, quality, 0) != 0) {
    tjFree(out);
    throw core::DataError(std::string("encode_jpeg: ") + tjGetErrorStr2(h));
  }
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  return bytes;
}

std::vector<uint8_t> encode_png(const torch::Tensor& image) {
  const auto hwc = interleaved(image, "encode_png");
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(hwc.size(1));
  png.height = static_cast<png_uint_32>(hwc.size(0));
  png.format = image.size(0) == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&png, nullptr, &size, 0, hwc.data_ptr<uint8_t>(), 0, nullptr)) {
    throw core::DataError(std::string("encode_png: ") + png.message);
  }
  std::vector<uint8_t> bytes(size);
  if (!png_image_write_to_memory(&png, bytes.data(), &size, 0, hwc.data_ptr<uint8_t>(), 0,
                                 nullptr)) {
    throw core::DataError(std::string("encode_png: ") + png.message);
  }
  bytes.resize(size);
  return bytes;
}

}  // namespace engine::data
