#include "engine/io/dataset_rows.hpp"

#include <algorithm>

#include "engine/core/errors.hpp"

namespace engine::io {
namespace {

// Large enough for the chunks a shuffled epoch keeps coming back to; HDF5's default is 1 MiB.
constexpr size_t kChunkCacheBytes = 64u << 20;

}  // namespace

DatasetRows::DatasetRows(std::shared_ptr<h5::Handle> file, const std::string& file_name,
                         const std::string& dataset)
    : file_(std::move(file)), name_(file_name + ":" + dataset) {
  const auto link_exists = [&](const std::string& path) {
    // every prefix must exist before H5Lexists may be asked about the next one
    for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
      const auto prefix = path.substr(0, slash);
      if (!prefix.empty() && prefix != "/" &&
          H5Lexists(file_->get(), prefix.c_str(), H5P_DEFAULT) <= 0)
        return false;
      if (slash == std::string::npos) return true;
    }
  };
  if (dataset.empty() || !link_exists(dataset) ||
      H5Oexists_by_name(file_->get(), dataset.c_str(), H5P_DEFAULT) <= 0) {
    throw core::DataError(file_name + ": no dataset '" + dataset + "'");
  }
  h5::Handle access(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, "make dataset access properties");
  H5Pset_chunk_cache(access.get(), 12421, kChunkCacheBytes, 1.0);
  hid_t id = H5Dopen2(file_->get(), dataset.c_str(), access.get());
  if (id < 0) throw core::DataError(name_ + ": not a dataset");
  dataset_ = h5::Handle(id, H5Dclose, "open " + name_);
  type_ = read_type_of(dataset_.get(), name_);
  h5::Handle space(H5Dget_space(dataset_.get()), H5Sclose, "read the shape of " + name_);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 1) throw core::DataError(name_ + ": a scalar has no rows to read");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  shape_.assign(dims.begin(), dims.end());
}

torch::Tensor DatasetRows::read(const torch::Tensor& indices) const {
  // HDF5 reads a selection in file order, so read the distinct rows sorted, then put them back
  // in the order asked for.
  auto [sorted, inverse] = at::_unique(indices, /*sorted=*/true, /*return_inverse=*/true);
  const auto rows = sorted.accessor<int64_t, 1>();
  const int64_t n = rows.size(0);
  auto shape = shape_;
  shape[0] = n;
  auto out = torch::empty(shape, torch::TensorOptions().dtype(type_.dtype));
  if (n > 0) {
    if (rows[0] < 0 || rows[n - 1] >= shape_[0]) {
      throw core::DataError(name_ + ": row " + std::to_string(rows[n - 1]) + " is out of range");
    }
    h5::Handle file_space(H5Dget_space(dataset_.get()), H5Sclose, "select rows of " + name_);
    H5Sselect_none(file_space.get());
    std::vector<hsize_t> start(shape_.size(), 0), count(shape_.begin(), shape_.end());
    // runs of consecutive rows become one block each
    for (int64_t i = 0; i < n;) {
      int64_t j = i + 1;
      while (j < n && rows[j] == rows[j - 1] + 1) ++j;
      start[0] = static_cast<hsize_t>(rows[i]);
      count[0] = static_cast<hsize_t>(j - i);
      if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_OR, start.data(), nullptr, count.data(),
                              nullptr) < 0) {
        throw core::IoError(name_ + ": cannot select rows");
      }
      i = j;
    }
    std::vector<hsize_t> memory_dims(shape.begin(), shape.end());
    h5::Handle memory_space(
        H5Screate_simple(static_cast<int>(memory_dims.size()), memory_dims.data(), nullptr),
        H5Sclose, "make a dataspace");
    if (H5Dread(dataset_.get(), type_.memory, memory_space.get(), file_space.get(), H5P_DEFAULT,
                out.data_ptr()) < 0) {
      throw core::DataError(name_ + ": cannot read rows (corrupt or truncated file?)");
    }
  }
  if (type_.boolean) out = out.to(torch::kBool);
  if (type_.half) out = out.to(torch::kFloat16);
  return n == indices.size(0) && torch::equal(sorted, indices) ? out : out.index_select(0, inverse);
}

}  // namespace engine::io
