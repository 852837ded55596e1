// Tensors and plain values in HDF5, readable with h5py: what torch.save / torch.load use.
// A tensor is a dataset of its own element type and shape; a table is a group; numbers,
// strings and booleans are scalar datasets marked with a `lua_type` attribute.
#pragma once

#include <torch/types.h>

#include <string>
#include <vector>

#include "engine/io/hdf5.hpp"

namespace engine::io {

// bfloat16, which HDF5 and numpy lack, is stored as float32 with attribute dtype = "bfloat16";
// every tensor carries its engine dtype name in that attribute.
void write_tensor(hid_t parent, const std::string& name, const torch::Tensor& tensor);
// Reads any numeric or boolean dataset (as written by write_tensor or by h5py/numpy).
// Throws DataError naming the dataset for a type libtorch cannot hold.
torch::Tensor read_tensor(hid_t parent, const std::string& name);

// How a numeric dataset is read into libtorch: the dtype, the HDF5 memory type to read with
// (owned here when it is not a predefined one) and what to convert afterwards.
struct ReadType {
  torch::ScalarType dtype = torch::kFloat32;
  hid_t memory = -1;
  h5::Handle owned;
  bool boolean = false;  // h5py's bool enum, read as int8
  bool half = false;     // float16 in the file, read as float32
};
// Throws DataError naming the dataset for a type libtorch cannot hold.
ReadType read_type_of(hid_t dataset, const std::string& name);

void write_number(hid_t parent, const std::string& name, double value);
void write_boolean(hid_t parent, const std::string& name, bool value);
void write_string(hid_t parent, const std::string& name, const std::string& value);

enum class NodeKind { kGroup, kTensor, kNumber, kBoolean, kString };
NodeKind node_kind(hid_t parent, const std::string& name);
double read_number(hid_t parent, const std::string& name);
bool read_boolean(hid_t parent, const std::string& name);
std::string read_string(hid_t parent, const std::string& name);

// Member names of a group, in creation order when tracked, else alphabetical.
std::vector<std::string> members(hid_t group);
bool has_attribute(hid_t object, const std::string& name);

}  // namespace engine::io
