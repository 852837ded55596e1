#include "engine/io/tensor_archive.hpp"

#include <cstring>

#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::io {
namespace {

using h5::bool_type;
using h5::Handle;

constexpr const char* kLuaType = "lua_type";
constexpr const char* kDtype = "dtype";

// The HDF5 memory type for a libtorch element type (bfloat16 goes through float32).
hid_t memory_type(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32:
      return H5T_NATIVE_FLOAT;
    case torch::kFloat64:
      return H5T_NATIVE_DOUBLE;
    case torch::kInt8:
      return H5T_NATIVE_INT8;
    case torch::kInt16:
      return H5T_NATIVE_INT16;
    case torch::kInt32:
      return H5T_NATIVE_INT32;
    case torch::kInt64:
      return H5T_NATIVE_INT64;
    case torch::kUInt8:
      return H5T_NATIVE_UINT8;
    default:
      return -1;
  }
}

using h5::open_dataset;

// A tensor's dataset carries a checksum (HDF5's Fletcher32 filter, which h5py reads as well):
// a flipped byte is found on reading instead of loading as another weight. The filter needs a
// chunked layout: one chunk of the whole tensor, or of as many rows as fit in 1 GiB (a chunk
// must stay under 4 GiB). Scalars and empty tensors stay contiguous, without one.
Handle checksummed_layout(const std::vector<hsize_t>& dims, size_t element_bytes,
                          const std::string& name) {
  Handle plist(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "make the layout of " + name);
  hsize_t count = dims.empty() ? 0 : 1;
  for (auto d : dims) count *= d;
  if (count == 0) return plist;
  std::vector<hsize_t> chunk = dims;
  constexpr hsize_t kMostChunkBytes = hsize_t{1} << 30;
  const hsize_t row_bytes = count / dims[0] * element_bytes;
  if (row_bytes > kMostChunkBytes) return plist;  // one row over 1 GiB: no checksum
  chunk[0] = std::min<hsize_t>(dims[0], std::max<hsize_t>(1, kMostChunkBytes / row_bytes));
  h5::check_status(H5Pset_chunk(plist.get(), static_cast<int>(chunk.size()), chunk.data()),
                   "chunk " + name);
  h5::check_status(H5Pset_fletcher32(plist.get()), "checksum " + name);
  return plist;
}

// Whether the dataset was written with a checksum (checksummed_layout).
bool has_checksum(hid_t dataset) {
  Handle plist(H5Dget_create_plist(dataset), H5Pclose, "read a dataset's layout");
  unsigned flags = 0;
  size_t count = 0;
  return H5Pget_filter_by_id2(plist.get(), H5Z_FILTER_FLETCHER32, &flags, &count, nullptr, 0,
                              nullptr, nullptr) >= 0;
}

Handle dataset_space(hid_t dataset, const std::vector<hsize_t>& dims) {
  if (dims.empty()) return Handle(H5Screate(H5S_SCALAR), H5Sclose, "make a dataspace");
  return Handle(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
                "make a dataspace");
}

// A dataset that must hold one value (a number, a boolean, a string): read into one variable,
// a dataset of several would write past it.
Handle open_single_dataset(hid_t parent, const std::string& name) {
  auto ds = open_dataset(parent, name);
  Handle space(H5Dget_space(ds.get()), H5Sclose, "read the dataspace of " + name);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count != 1) {
    throw core::DataError(name + " holds " + std::to_string(count) +
                          " values, where one is expected");
  }
  return ds;
}

Handle write_scalar(hid_t parent, const std::string& name, hid_t file_type, hid_t mem_type,
                    const void* value, const char* lua_type) {
  auto space = dataset_space(-1, {});
  Handle ds(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                       H5P_DEFAULT),
            H5Dclose, "create dataset " + name);
  h5::check_status(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, value),
                   "write " + name);
  h5::write_attribute(ds.get(), kLuaType, std::string(lua_type));
  return ds;
}

}  // namespace

bool has_attribute(hid_t object, const std::string& name) {
  return h5::has_attribute(object, name);
}

void write_tensor(hid_t parent, const std::string& name, const torch::Tensor& tensor) {
  auto t = tensor.detach().to(torch::kCPU).contiguous();
  const std::string dtype = core::dtype_name(t.scalar_type());
  if (t.scalar_type() == torch::kBFloat16) t = t.to(torch::kFloat32);
  std::vector<hsize_t> dims(t.sizes().begin(), t.sizes().end());
  auto space = dataset_space(-1, dims);
  Handle type;
  hid_t file_type = -1, mem_type = -1;
  if (t.scalar_type() == torch::kBool) {
    type = bool_type();
    file_type = mem_type = type.get();
    t = t.to(torch::kInt8);
  } else if (t.scalar_type() == torch::kFloat16) {
    // IEEE half: HDF5 has no predefined type, so derive it from float32 (as h5py does).
    type = Handle(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, "make a float16 type");
    h5::check_status(H5Tset_fields(type.get(), 15, 10, 5, 0, 10), "make a float16 type");
    h5::check_status(H5Tset_size(type.get(), 2), "make a float16 type");
    h5::check_status(H5Tset_ebias(type.get(), 15), "make a float16 type");
    file_type = type.get();
    t = t.to(torch::kFloat32);
    mem_type = H5T_NATIVE_FLOAT;
  } else {
    mem_type = memory_type(t.scalar_type());
    if (mem_type < 0) {
      throw core::IoError("torch.save: cannot store a tensor of dtype " + dtype + " ('" + name +
                          "')");
    }
    file_type = mem_type;
  }
  const auto layout = checksummed_layout(dims, H5Tget_size(file_type), name);
  Handle ds(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, layout.get(),
                       H5P_DEFAULT),
            H5Dclose, "create dataset " + name);
  if (t.numel() > 0) {
    h5::check_status(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data_ptr()),
                     "write dataset " + name);
  }
  h5::write_attribute(ds.get(), kDtype, dtype);
}

ReadType read_type_of(hid_t dataset, const std::string& name) {
  Handle type(H5Dget_type(dataset), H5Tclose, "read the type of " + name);
  const H5T_class_t cls = H5Tget_class(type.get());
  const size_t size = H5Tget_size(type.get());
  ReadType out;
  out.half = cls == H5T_FLOAT && size == 2;
  if (cls == H5T_FLOAT) {
    out.dtype = size <= 4 ? torch::kFloat32 : torch::kFloat64;
    out.memory = size <= 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  } else if (cls == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type.get()) == H5T_SGN_2;
    if (!is_signed && size == 1) {
      out.dtype = torch::kUInt8, out.memory = H5T_NATIVE_UINT8;
    } else if (size == 1) {
      out.dtype = torch::kInt8, out.memory = H5T_NATIVE_INT8;
    } else if (size == 2 && is_signed) {
      out.dtype = torch::kInt16, out.memory = H5T_NATIVE_INT16;
    } else if (size <= 4 && is_signed) {
      out.dtype = torch::kInt32, out.memory = H5T_NATIVE_INT32;
    } else if (is_signed || size < 8) {
      out.dtype = torch::kInt64, out.memory = H5T_NATIVE_INT64;  // uint16/uint32 widen losslessly
    } else {
      throw core::DataError(name + ": uint64 data has no libtorch dtype");
    }
  } else if (cls == H5T_ENUM && size == 1) {
    out.owned = bool_type();
    out.dtype = torch::kInt8, out.memory = out.owned.get(), out.boolean = true;
  } else {
    throw core::DataError(name + ": not a numeric dataset (HDF5 class " + std::to_string(cls) +
                          ")");
  }
  return out;
}

torch::Tensor read_tensor(hid_t parent, const std::string& name) {
  auto ds = open_dataset(parent, name);
  Handle space(H5Dget_space(ds.get()), H5Sclose, "read a dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(static_cast<size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  std::vector<int64_t> shape(dims.begin(), dims.end());

  const ReadType t = read_type_of(ds.get(), name);
  // what the dataset declares, against what the file stores for it, before allocating
  double declared = static_cast<double>(torch::elementSize(t.dtype));
  for (auto d : shape) declared *= static_cast<double>(d);
  h5::check_declared_bytes(ds.get(), declared, name + " (" + core::shape_string(shape) + ")");
  auto out = torch::empty(shape, torch::TensorOptions().dtype(t.dtype));
  if (out.numel() > 0 &&
      H5Dread(ds.get(), t.memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data_ptr()) < 0) {
    if (has_checksum(ds.get())) {
      throw core::DataError(name + ": its bytes do not match their checksum: the file is damaged");
    }
    h5::check_status(-1, "read dataset " + name);
  }
  if (t.boolean) out = out.to(torch::kBool);
  if (has_attribute(ds.get(), kDtype)) {
    const auto dtype = core::parse_dtype(h5::read_string_attribute(ds.get(), kDtype));
    if (dtype != out.scalar_type()) out = out.to(dtype);
  } else if (t.half) {
    out = out.to(torch::kFloat16);
  }
  return out;
}

void write_number(hid_t parent, const std::string& name, double value) {
  write_scalar(parent, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, "number");
}

void write_boolean(hid_t parent, const std::string& name, bool value) {
  auto type = bool_type();
  const int8_t v = value ? 1 : 0;
  write_scalar(parent, name, type.get(), type.get(), &v, "boolean");
}

void write_string(hid_t parent, const std::string& name, const std::string& value) {
  auto ds = h5::write_string_dataset(parent, name, value);
  h5::write_attribute(ds.get(), kLuaType, std::string("string"));
}

NodeKind node_kind(hid_t parent, const std::string& name) {
  H5O_info_t info;
  if (H5Oget_info_by_name(parent, name.c_str(), &info, H5P_DEFAULT) < 0) {
    throw core::DataError("HDF5: no object named '" + name + "'");
  }
  if (info.type == H5O_TYPE_GROUP) return NodeKind::kGroup;
  auto ds = open_dataset(parent, name);
  if (has_attribute(ds.get(), kLuaType)) {
    const auto kind = h5::read_string_attribute(ds.get(), kLuaType);
    if (kind == "number") return NodeKind::kNumber;
    if (kind == "boolean") return NodeKind::kBoolean;
    if (kind == "string") return NodeKind::kString;
  }
  Handle type(H5Dget_type(ds.get()), H5Tclose, "read the type of " + name);
  return H5Tget_class(type.get()) == H5T_STRING ? NodeKind::kString : NodeKind::kTensor;
}

double read_number(hid_t parent, const std::string& name) {
  auto ds = open_single_dataset(parent, name);
  double v = 0;
  h5::check_status(H5Dread(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v),
                   "read " + name);
  return v;
}

bool read_boolean(hid_t parent, const std::string& name) {
  auto ds = open_single_dataset(parent, name);
  auto type = bool_type();
  int8_t v = 0;
  h5::check_status(H5Dread(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &v),
                   "read " + name);
  return v != 0;
}

std::string read_string(hid_t parent, const std::string& name) {
  auto ds = open_single_dataset(parent, name);
  Handle file_type(H5Dget_type(ds.get()), H5Tclose, "read the type of " + name);
  if (H5Tis_variable_str(file_type.get()) > 0) {
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "make a string type");
    H5Tset_size(type.get(), H5T_VARIABLE);
    H5Tset_cset(type.get(), H5Tget_cset(file_type.get()));
    char* p = nullptr;
    h5::check_status(H5Dread(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &p),
                     "read " + name);
    std::string out = p ? p : "";
    H5free_memory(p);
    return out;
  }
  std::string out(H5Tget_size(file_type.get()), '\0');
  h5::check_status(H5Dread(ds.get(), file_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()),
                   "read " + name);
  out.resize(std::strlen(out.c_str()));
  return out;
}

std::vector<std::string> members(hid_t group) {
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) throw core::IoError("HDF5: cannot list a group");
  std::vector<std::string> out;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t n =
        H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (n < 0) throw core::IoError("HDF5: cannot list a group");
    std::vector<char> name(static_cast<size_t>(n) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(),
                       H5P_DEFAULT);
    out.emplace_back(name.data());
  }
  return out;
}

}  // namespace engine::io
