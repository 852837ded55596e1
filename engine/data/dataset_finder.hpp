// Finds a dataset's folder by name among the places datasets are kept.
#pragma once

#include <string>
#include <vector>

namespace engine::data {

// The folders searched, in order: each entry of $ENGINE_DATASETS (colon-separated), then
// `extra_roots`, then /usr/share/datasets (where Debian's dataset-* packages install).
std::vector<std::string> dataset_roots(const std::vector<std::string>& extra_roots);

// The first `<root>/<name>` that is a non-empty folder ("fashion_mnist" also matches
// "fashion-mnist"). Throws DataError listing every place looked at and how to get the data.
std::string find_dataset(const std::string& name, const std::vector<std::string>& roots);

}  // namespace engine::data
