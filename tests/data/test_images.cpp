#include <doctest/doctest.h>

#include <filesystem>

#include "engine/core/errors.hpp"
#include "engine/data/image_codec.hpp"
#include "engine/data/image_folder.hpp"
#include "engine/data/image_transforms.hpp"
#include "engine/data/loader.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

// A C x H x W uint8 image whose pixels vary smoothly (so JPEG keeps them close).
torch::Tensor gradient_image(int64_t height, int64_t width, int64_t seed) {
  auto y = torch::arange(height, torch::kFloat32).view({1, height, 1}).expand({3, height, width});
  auto x = torch::arange(width, torch::kFloat32).view({1, 1, width}).expand({3, height, width});
  auto c = torch::arange(3, torch::kFloat32).view({3, 1, 1});
  return (y * 2 + x + c * 40 + static_cast<float>(seed * 10)).remainder(256).to(torch::kUInt8);
}

void write_image(const std::string& path, const torch::Tensor& image) {
  std::string ext = path.substr(path.size() - 4);
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool png = ext == ".png";
  test::write_bytes(path, png ? data::encode_png(image) : data::encode_jpeg(image, 95));
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// root/cat: 3 JPEGs, root/dog: 2 PNGs (one 40x30, to make sizes differ).
std::string write_folder(const std::string& name) {
  const auto root = test::scratch_dir(name);
  std::filesystem::create_directories(root + "/cat");
  std::filesystem::create_directories(root + "/dog/nested");
  for (int i = 0; i < 3; ++i)
    write_image(root + "/cat/" + std::to_string(i) + ".jpg", gradient_image(32, 32, i));
  write_image(root + "/dog/a.png", gradient_image(32, 32, 7));
  write_image(root + "/dog/nested/b.PNG", gradient_image(40, 30, 8));
  test::write_bytes(root + "/dog/notes.txt", {'h', 'i'});
  return root;
}

}  // namespace

TEST_CASE("PNG round-trips exactly and JPEG closely, in RGB and in grey") {
  const auto image = gradient_image(20, 30, 1);
  auto png = data::decode_image(data::encode_png(image), data::ColorMode::kRgb, "x.png");
  CHECK(png.sizes() == image.sizes());
  CHECK(torch::equal(png, image));
  auto jpg = data::decode_image(data::encode_jpeg(image, 95), data::ColorMode::kRgb, "x.jpg");
  CHECK(jpg.sizes() == image.sizes());
  CHECK((jpg.to(torch::kInt32) - image.to(torch::kInt32))
            .abs()
            .to(torch::kFloat)
            .mean()
            .item<float>() < 4);
  auto grey = data::decode_image(data::encode_png(image), data::ColorMode::kGray, "x.png");
  CHECK((grey.sizes() == torch::IntArrayRef{1, 20, 30}));
}

TEST_CASE("truncated, corrupt and foreign image files fail with the file name") {
  const auto jpeg = data::encode_jpeg(gradient_image(64, 64, 2));
  const auto png = data::encode_png(gradient_image(64, 64, 2));
  auto truncated = [](std::vector<uint8_t> b) {
    b.resize(b.size() / 2);
    return b;
  };
  for (const auto& bad : {truncated(jpeg), truncated(png), std::vector<uint8_t>{'G', 'I', 'F'},
                          std::vector<uint8_t>{}}) {
    CHECK_THROWS_AS(data::decode_image(bad, data::ColorMode::kRgb, "bad.img"), core::DataError);
    try {
      data::decode_image(bad, data::ColorMode::kRgb, "bad.img");
    } catch (const core::DataError& e) {
      CHECK(std::string(e.what()).rfind("bad.img: ", 0) == 0);
    }
  }
  auto corrupt = jpeg;
  for (size_t i = corrupt.size() / 3; i < corrupt.size() / 3 + 64; ++i) corrupt[i] = 0xFF;
  CHECK_THROWS_AS(data::decode_image(corrupt, data::ColorMode::kRgb, "c.jpg"), core::DataError);
  // the decoder recovers: the next good image decodes
  CHECK(data::decode_image(jpeg, data::ColorMode::kRgb, "good.jpg").size(1) == 64);
}

TEST_CASE("an image folder has sorted classes, finds images recursively, ignores other files") {
  const auto root = write_folder("folder");
  data::ImageFolderSource source({root});
  CHECK(source.classes() == std::vector<std::string>{"cat", "dog"});
  CHECK(source.size() == 5);
  auto batch = source.gather(torch::tensor({4, 0}, torch::kInt64));
  REQUIRE(batch.samples.size() == 2);
  CHECK((batch.samples[0].sizes() == torch::IntArrayRef{3, 40, 30}));
  CHECK((batch.samples[1].scalar_type() == torch::kUInt8));
  CHECK(batch.target.equal(torch::tensor({1, 0}, torch::kInt64)));
  CHECK(source.describe().find("5 images, 2 classes") != std::string::npos);
}

TEST_CASE("links in an image folder: loops and links into a class folder are errors, out is said") {
  namespace fs = std::filesystem;
  const auto root = write_folder("links");
  const auto outside = test::scratch_dir("links-outside");
  write_image(outside + "/far.jpg", gradient_image(32, 32, 3));
  fs::create_directory_symlink(outside, root + "/cat/far");  // out of the root: read, and said
  data::ImageFolderSource with_far({root});
  CHECK(with_far.size() == 6);
  // a loop back to the root (it made the dataset 41 times larger, dog's images labelled cat)
  fs::create_directory_symlink(root, root + "/cat/loop");
  CHECK_THROWS_WITH_AS(data::ImageFolderSource({root}),
                       doctest::Contains((root + "/cat/loop links to ").c_str()), core::DataError);
  CHECK_THROWS_WITH_AS(data::ImageFolderSource({root}),
                       doctest::Contains("a folder already listed: a loop"), core::DataError);
  fs::remove(root + "/cat/loop");
  // into another class's folder: its images would carry both labels
  fs::create_directory_symlink(root + "/dog/nested", root + "/cat/nested");
  CHECK_THROWS_WITH_AS(data::ImageFolderSource({root}),
                       doctest::Contains("inside another class's folder"), core::DataError);
  fs::remove(root + "/cat/nested");
  data::ImageFolderSource again({root});
  CHECK(again.size() == 6);
}

TEST_CASE("images of different sizes cannot be batched until a transform gives them one size") {
  data::Pipeline p(
      std::make_shared<data::ImageFolderSource>(data::ImageFolderOptions{write_folder("sizes")}));
  data::EpochReader unsized(p.batch(5), 0, 0);
  CHECK_THROWS_WITH_AS(unsized.next(), doctest::Contains("data.resize"), core::DataError);
  data::EpochReader sized(p.map(std::make_shared<data::Resize>(data::Size2{24, 20}))
                              .map(std::make_shared<data::ToFloat>())
                              .batch(5),
                          0, 0);
  auto b = sized.next();
  CHECK((b->input.sizes() == torch::IntArrayRef{5, 3, 24, 20}));
  CHECK((b->input.scalar_type() == torch::kFloat32));
  CHECK(b->input.max().item<float>() <= 1.0f);
}

TEST_CASE("empty roots, empty class folders and bad images stop with the path at fault") {
  const auto root = test::scratch_dir("empty");
  CHECK_THROWS_WITH_AS(data::ImageFolderSource({root + "/none"}),
                       doctest::Contains("is not a folder"), core::DataError);
  CHECK_THROWS_WITH_AS(data::ImageFolderSource({root}), doctest::Contains("no class folders"),
                       core::DataError);
  std::filesystem::create_directories(root + "/a");
  std::filesystem::create_directories(root + "/b");
  write_image(root + "/a/1.png", gradient_image(8, 8, 0));
  CHECK_THROWS_WITH_AS(data::ImageFolderSource({root}),
                       doctest::Contains((root + "/b holds no image").c_str()), core::DataError);
  write_image(root + "/b/1.png", gradient_image(8, 8, 1));
  auto bytes = file_bytes(root + "/b/1.png");
  bytes.resize(bytes.size() - 20);
  test::write_bytes(root + "/b/1.png", bytes);
  data::Pipeline strict(std::make_shared<data::ImageFolderSource>(data::ImageFolderOptions{root}));
  data::EpochReader reader(strict.batch(2), 0, 0);
  CHECK_THROWS_WITH_AS(reader.next(),
                       doctest::Contains((root + "/b/1.png: corrupt or truncated PNG").c_str()),
                       core::DataError);

  // skip_bad: the good image comes through, the bad one is counted
  data::ImageFolderOptions lenient{root, data::ColorMode::kRgb, true};
  data::Pipeline p(std::make_shared<data::ImageFolderSource>(lenient));
  data::EpochReader skipping(p.batch(2), 0, 0);
  auto b = skipping.next();
  CHECK(b->size() == 1);
  CHECK(b->target.equal(torch::tensor({0}, torch::kInt64)));
  CHECK_FALSE(skipping.next().has_value());
  CHECK(skipping.skipped() == 1);
  // a batch made only of bad records is passed over
  data::EpochReader one_by_one(p.batch(1), 0, 0);
  CHECK(one_by_one.next()->size() == 1);
  CHECK_FALSE(one_by_one.next().has_value());
  CHECK(one_by_one.skipped() == 1);
}

TEST_CASE("resize follows torchvision: the smaller edge, or an exact size; uint8 stays uint8") {
  std::vector<core::Rng> none;
  data::Batch b;
  b.samples = {gradient_image(40, 30, 0), torch::full({3, 10, 20}, 77, torch::kUInt8)};
  data::Resize(15).apply(b, none);
  CHECK((b.samples[0].sizes() == torch::IntArrayRef{3, 20, 15}));
  CHECK((b.samples[1].sizes() == torch::IntArrayRef{3, 15, 30}));
  CHECK((b.samples[1].scalar_type() == torch::kUInt8));
  CHECK(torch::all(b.samples[1] == 77).item<bool>());  // a flat image stays flat
  auto down = data::resize_image(torch::arange(16, torch::kFloat32).view({1, 4, 4}), 2, 2);
  // PIL's and torchvision's antialiased bilinear: a triangle filter twice as wide when halving;
  // torchvision.transforms.functional.resize(arange(16).view(1, 4, 4), [2, 2], antialias=True)
  CHECK(down[0][0][0].item<float>() == doctest::Approx(3.5714));
  CHECK(down[0][1][1].item<float>() == doctest::Approx(11.4286));
}

TEST_CASE("resampling matches torchvision's resize(antialias=True), shrinking and enlarging") {
  // expected values: torchvision 0.14, transforms.functional.resize(x, size, antialias=True)
  auto x = torch::arange(36, torch::kFloat32).pow(1.5).view({1, 6, 6});
  const std::vector<float> shrunk = {7.071057f,   11.913197f,  17.993513f,  40.037720f,
                                     49.328399f,  59.246517f,  91.009888f,  103.233620f,
                                     115.933617f, 152.495758f, 167.006805f, 181.918854f};
  auto a = data::resize_image(x, 4, 3).reshape(-1);
  for (size_t i = 0; i < shrunk.size(); ++i) {
    CHECK(a[static_cast<int64_t>(i)].item<float>() == doctest::Approx(shrunk[i]).epsilon(1e-5));
  }
  auto y = torch::arange(9, torch::kFloat32).pow(2).view({1, 3, 3});
  const std::vector<float> enlarged = {0.0f,    0.625f, 2.125f,  4.0f,    3.6f,    5.725f, 9.025f,
                                       12.4f,   9.0f,   13.375f, 19.375f, 25.0f,   25.2f,  31.825f,
                                       40.525f, 48.4f,  36.0f,   44.125f, 54.625f, 64.0f};
  auto b = data::resize_image(y, 5, 4).reshape(-1);
  for (size_t i = 0; i < enlarged.size(); ++i) {
    CHECK(b[static_cast<int64_t>(i)].item<float>() == doctest::Approx(enlarged[i]).epsilon(1e-5));
  }
  // a crop of an interleaved (H x W x C) image reads the same as its contiguous copy
  auto hwc = torch::randint(0, 256, {9, 11, 3}, torch::kUInt8).permute({2, 0, 1});
  auto crop = hwc.narrow(1, 1, 7).narrow(2, 2, 8);
  CHECK(
      torch::equal(data::resize_image(crop, 5, 13), data::resize_image(crop.contiguous(), 5, 13)));
}

TEST_CASE("center crop takes the middle and pads a small image with zeros") {
  std::vector<core::Rng> none;
  data::Batch b;
  b.samples = {torch::arange(25, torch::kFloat32).view({1, 5, 5}), torch::ones({1, 2, 2})};
  data::CenterCrop({3, 3}).apply(b, none);
  CHECK(b.samples[0][0][0][0].item<float>() == 6);
  CHECK((b.samples[1].sizes() == torch::IntArrayRef{1, 3, 3}));
  CHECK(b.samples[1].sum().item<float>() == 4);
}

TEST_CASE("random transforms depend on seed, epoch and sample, not on workers or batch size") {
  auto images = torch::arange(8 * 3 * 12 * 12, torch::kFloat32).view({8, 3, 12, 12});
  data::Pipeline base(
      std::make_shared<data::TensorSource>(images, torch::arange(8, torch::kInt64), "images"));
  auto augment =
      std::make_shared<data::Compose>(std::vector<std::shared_ptr<const data::Transform>>{
          std::make_shared<data::RandomResizedCrop>(data::Size2{6, 6}, 0.2, 1.0, 0.75, 1.33),
          std::make_shared<data::RandomCrop>(data::Size2{5, 5}, 1),
          std::make_shared<data::RandomFlip>(0.5, false)});
  auto p = base.map(augment).shuffle();
  auto epoch = [&](const data::Pipeline& q, int64_t e) {
    data::EpochReader r(q, 11, e);
    std::vector<torch::Tensor> out;
    while (auto b = r.next()) out.push_back(b->input);
    return torch::cat(out);
  };
  const auto a = epoch(p.batch(4).workers(1), 0);
  CHECK((a.sizes() == torch::IntArrayRef{8, 3, 5, 5}));
  CHECK(torch::equal(a, epoch(p.batch(3).workers(3), 0)));
  CHECK_FALSE(torch::equal(a, epoch(p.batch(4), 1)));
  // resuming mid-epoch gives the same augmented samples
  data::EpochReader resumed(p.batch(4), 11, 0, 5);
  CHECK(torch::equal(resumed.next()->input, a.slice(0, 5, 8)));
}

TEST_CASE("random flip with p = 1 mirrors; bad sizes and options are refused") {
  std::vector<core::Rng> random{core::Rng(1)};
  data::Batch b;
  b.samples = {torch::arange(6, torch::kFloat32).view({1, 2, 3})};
  data::RandomFlip(1.0, false).apply(b, random);
  CHECK(b.samples[0][0][0][0].item<float>() == 2);
  data::RandomFlip(1.0, true).apply(b, random);
  CHECK(b.samples[0][0][0][0].item<float>() == 5);
  CHECK_THROWS_AS(data::RandomFlip(2.0, false), core::UsageError);
  CHECK_THROWS_AS(data::CenterCrop({0, 3}), core::UsageError);
  CHECK_THROWS_AS(data::RandomResizedCrop({4, 4}, 0.5, 0.1, 1, 1), core::UsageError);
  data::Batch small;
  small.samples = {torch::zeros({1, 2, 2})};
  CHECK_THROWS_WITH_AS(data::RandomCrop({3, 3}, 0).apply(small, random),
                       doctest::Contains("larger than"), core::DataError);
}

TEST_CASE("to_float scales bytes, normalize refuses bytes, one_hot checks the class range") {
  std::vector<core::Rng> none;
  data::Batch b{torch::full({2, 1, 2, 2}, 255, torch::kUInt8),
                torch::tensor({0, 2}, torch::kInt64)};
  CHECK_THROWS_WITH_AS(data::Normalize({0.5}, {0.5}).apply(b, none),
                       doctest::Contains("data.to_float"), core::DataError);
  data::ToFloat().apply(b, none);
  CHECK(b.input.max().item<float>() == 1.0f);
  data::OneHot(3).apply(b, none);
  CHECK(b.target.equal(torch::tensor({{1.f, 0.f, 0.f}, {0.f, 0.f, 1.f}})));
  data::Batch c{torch::zeros({1, 1}), torch::tensor({5}, torch::kInt64)};
  CHECK_THROWS_AS(data::OneHot(3).apply(c, none), core::DataError);
}
