#include "engine/data/image_folder.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/log.hpp"
#include "engine/data/prediction_input.hpp"

namespace engine::data {
namespace {

namespace fs = std::filesystem;

bool is_image_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

bool inside(const fs::path& path, const fs::path& folder) {
  const auto rel = path.lexically_relative(folder);
  return !rel.empty() && *rel.begin() != "..";
}

// Image files under a class folder, recursively and sorted, as torchvision's ImageFolder finds
// them (links to folders followed). A link that leads back into a folder already listed (a
// loop: every image again, under ever longer paths), elsewhere in its own class folder (read
// twice) or into another class's folder (labelled twice) is a DataError naming it; one that
// leads out of the root is said, and read.
std::vector<std::string> images_under(const fs::path& folder, const fs::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path own = fs::canonical(folder, ec);
  const fs::path top = fs::canonical(root, ec);
  if (ec) throw core::IoError(folder.string() + ": cannot list (" + ec.message() + ")");
  std::vector<fs::path> listed{own};
  for (fs::recursive_directory_iterator
           it(folder, fs::directory_options::follow_directory_symlink, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) && it->is_directory(ec)) {
      const fs::path target = fs::canonical(it->path(), ec);
      if (ec) break;
      const auto again = std::find_if(listed.begin(), listed.end(), [&](const fs::path& seen) {
        return target == seen || inside(seen, target);
      });
      if (again != listed.end()) {
        throw core::DataError("data.image_folder: " + it->path().string() + " links to " +
                              target.string() +
                              ", a folder already listed: a loop, which would read its images "
                              "again and again; remove the link");
      }
      if (inside(target, own)) {
        throw core::DataError("data.image_folder: " + it->path().string() + " links to " +
                              target.string() +
                              ", inside its own class folder: its images would be read twice; "
                              "remove the link");
      }
      if (inside(target, top)) {
        throw core::DataError("data.image_folder: " + it->path().string() + " links to " +
                              target.string() +
                              ", inside another class's folder: its images would be labelled "
                              "with both classes; remove the link");
      }
      if (!inside(target, top)) {
        core::log::warn(
            "data.image_folder: {} links to {}, outside {}: its images are read as "
            "class {}",
            it->path().string(), target.string(), root.string(), folder.filename().string());
      }
      listed.push_back(target);
    } else if (it->is_directory(ec)) {
      listed.push_back(fs::canonical(it->path(), ec));
    }
    if (it->is_regular_file(ec) && is_image_name(it->path())) out.push_back(it->path().string());
  }
  if (ec) throw core::IoError(folder.string() + ": cannot list (" + ec.message() + ")");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

ImageFolderSource::ImageFolderSource(ImageFolderOptions options)
    : options_(std::move(options)), bad_(options_.skip_bad) {
  const fs::path root(options_.root);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    throw core::DataError("data.image_folder: " + options_.root + " is not a folder");
  }
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (entry.is_directory(ec)) classes_.push_back(entry.path().filename().string());
  }
  if (ec) throw core::IoError(options_.root + ": cannot list (" + ec.message() + ")");
  std::sort(classes_.begin(), classes_.end());
  if (classes_.empty()) {
    throw core::DataError("data.image_folder: " + options_.root +
                          " has no class folders (expected one folder per class, e.g. " +
                          (root / "cat" / "1.jpg").string() + ")");
  }
  for (size_t c = 0; c < classes_.size(); ++c) {
    const auto files = images_under(root / classes_[c], root);
    if (files.empty()) {
      throw core::DataError("data.image_folder: class folder " + (root / classes_[c]).string() +
                            " holds no image (.jpg, .jpeg or .png)");
    }
    paths_.insert(paths_.end(), files.begin(), files.end());
    labels_.insert(labels_.end(), files.size(), static_cast<int64_t>(c));
  }
}

Batch ImageFolderSource::gather(const torch::Tensor& indices) const {
  Batch batch;
  const auto index = indices.accessor<int64_t, 1>();
  std::vector<int64_t> kept, targets;
  batch.samples.reserve(static_cast<size_t>(index.size(0)));
  for (int64_t i = 0; i < index.size(0); ++i) {
    const auto& file = path(index[i]);
    try {
      batch.samples.push_back(decode_image(core::read_file(file), options_.mode, file));
    } catch (const core::Error& e) {
      if (!bad_.skip()) throw;
      bad_.report(index[i], e.what());
      ++batch.skipped;
      continue;
    }
    kept.push_back(index[i]);
    targets.push_back(labels_[static_cast<size_t>(index[i])]);
  }
  batch.target = torch::tensor(targets, torch::kInt64);
  batch.indices = torch::tensor(kept, torch::kInt64);
  return batch;
}

std::shared_ptr<Source> ImageFolderSource::prediction_source(const std::string& input,
                                                             const io::h5::Handle&) const {
  return std::make_shared<ImageListSource>(listed_images(input), mode());
}

std::string ImageFolderSource::describe() const {
  return "image_folder(" + options_.root + ", " + std::to_string(size()) + " images, " +
         std::to_string(classes_.size()) + " classes)";
}

ImageListSource::ImageListSource(std::vector<std::string> paths, ColorMode mode)
    : paths_(std::move(paths)), mode_(mode) {}

Batch ImageListSource::gather(const torch::Tensor& indices) const {
  Batch batch;
  const auto index = indices.accessor<int64_t, 1>();
  for (int64_t i = 0; i < index.size(0); ++i) {
    const auto& file = paths_.at(static_cast<size_t>(index[i]));
    batch.samples.push_back(decode_image(core::read_file(file), mode_, file));
  }
  batch.indices = indices.clone();
  return batch;
}

std::string ImageListSource::describe() const {
  return "images(" + std::to_string(paths_.size()) + " listed)";
}

}  // namespace engine::data
