// CIFAR-10 and CIFAR-100 binary files: record sizes and labels.
#include <filesystem>

#include "engine/data/cifar.hpp"
#include "tests/fuzz/fuzz_target.hpp"

ENGINE_FUZZ_TARGET(cifar) {
  engine::fuzz::Bytes in(data, size);
  const int kind = static_cast<int>(in.in_range(0, 2));  // CIFAR-10, CIFAR-100 fine, coarse
  const std::string body = in.rest();
  const auto root = engine::fuzz::scratch_dir() + "/cifar";
  std::filesystem::create_directories(root);
  const auto file = root + (kind == 0 ? "/test_batch.bin" : "/test.bin");
  engine::fuzz::write_file(file, body.data(), body.size());
  const auto source =
      kind == 0 ? engine::data::load_cifar10(root, "test")
                : engine::data::load_cifar100(root, "test", kind == 1 ? "fine" : "coarse");
  const auto batch = source->gather(torch::arange(std::min<int64_t>(source->size(), 4)));
  (void)batch;
  std::filesystem::remove(file);
}
