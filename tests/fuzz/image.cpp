// JPEG and PNG decoding, in colour and in grey.
#include "engine/data/image_codec.hpp"
#include "tests/fuzz/fuzz_target.hpp"

ENGINE_FUZZ_TARGET(image) {
  engine::fuzz::Bytes in(data, size);
  const auto mode = in.flag() ? engine::data::ColorMode::kGray : engine::data::ColorMode::kRgb;
  const auto bytes = in.raw(size);
  const auto image = engine::data::decode_image(bytes, mode, "input.img");
  if (image.numel() > 0) (void)image.sum().item<int64_t>();
}
