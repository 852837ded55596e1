#include "engine/data/cifar.hpp"

#include <filesystem>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"

namespace engine::data {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kPixels = 3 * 32 * 32;

// `root` itself when it holds `probe`, else root/subfolder when that does.
std::string resolve(const std::string& root, const std::string& subfolder, const std::string& probe,
                    const std::string& what) {
  if (fs::is_regular_file(fs::path(root) / probe)) return root;
  const fs::path nested = fs::path(root) / subfolder;
  if (fs::is_regular_file(nested / probe)) return nested.string();
  throw core::DataError(what + ": " + probe + " not found in " + root + " nor in " +
                        nested.string() + " (the binary version of the dataset is expected)");
}

struct Records {
  std::vector<uint8_t> pixels;
  std::vector<int64_t> labels;
};

// Appends the records of one file: `label_bytes` label bytes then 3072 pixels each; the label
// used is byte `label_byte`, which must be below `classes`.
void read_records(const std::string& path, int label_bytes, int label_byte, int64_t classes,
                  Records& out) {
  const auto bytes = core::read_file(path);
  const int64_t record = label_bytes + kPixels;
  const auto size = static_cast<int64_t>(bytes.size());
  if (size == 0 || size % record != 0) {
    throw core::DataError(path + ": " + std::to_string(size) + " bytes is not a whole number of " +
                          std::to_string(record) +
                          "-byte records (truncated or not a CIFAR binary file)");
  }
  for (int64_t r = 0; r < size / record; ++r) {
    const uint8_t* rec = bytes.data() + r * record;
    if (rec[label_byte] >= classes) {
      throw core::DataError(path + ": record " + std::to_string(r + 1) + " has label " +
                            std::to_string(rec[label_byte]) + ", outside 0.." +
                            std::to_string(classes - 1) + " (not a CIFAR binary file?)");
    }
    out.labels.push_back(rec[label_byte]);
    out.pixels.insert(out.pixels.end(), rec + label_bytes, rec + record);
  }
}

std::shared_ptr<TensorSource> to_source(Records records, const std::string& name) {
  const auto n = static_cast<int64_t>(records.labels.size());
  auto input = torch::from_blob(records.pixels.data(), {n, 3, 32, 32}, torch::kUInt8).clone();
  auto target = torch::tensor(records.labels, torch::kInt64);
  return std::make_shared<TensorSource>(input, target, name);
}

void check_split(const std::string& split, const char* what) {
  if (split != "train" && split != "test") {
    throw core::UsageError(std::string(what) + ": split must be 'train' or 'test', got '" + split +
                           "'");
  }
}

}  // namespace

std::shared_ptr<TensorSource> load_cifar10(const std::string& root, const std::string& split) {
  check_split(split, "data.cifar10");
  const std::string probe = split == "train" ? "data_batch_1.bin" : "test_batch.bin";
  const auto folder = resolve(root, "cifar-10-batches-bin", probe, "data.cifar10");
  Records records;
  if (split == "train") {
    for (int b = 1; b <= 5; ++b) {
      const auto path = (fs::path(folder) / ("data_batch_" + std::to_string(b) + ".bin")).string();
      if (!fs::is_regular_file(path))
        throw core::DataError("data.cifar10: " + path + " is missing");
      read_records(path, 1, 0, 10, records);
    }
  } else {
    read_records((fs::path(folder) / probe).string(), 1, 0, 10, records);
  }
  return to_source(std::move(records), "cifar10(" + split + ")");
}

std::shared_ptr<TensorSource> load_cifar100(const std::string& root, const std::string& split,
                                            const std::string& labels) {
  check_split(split, "data.cifar100");
  if (labels != "fine" && labels != "coarse") {
    throw core::UsageError("data.cifar100: labels must be 'fine' or 'coarse', got '" + labels +
                           "'");
  }
  const std::string file = split + ".bin";
  const auto folder = resolve(root, "cifar-100-binary", file, "data.cifar100");
  Records records;
  const bool fine = labels == "fine";
  read_records((fs::path(folder) / file).string(), 2, fine ? 1 : 0, fine ? 100 : 20, records);
  return to_source(std::move(records), "cifar100(" + split + ", " + labels + ")");
}

}  // namespace engine::data
