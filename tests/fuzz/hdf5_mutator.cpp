#include "tests/fuzz/hdf5_mutator.hpp"

#include <hdf5.h>

#include <filesystem>
#include <vector>

namespace engine::fuzz {
namespace {

struct Node {
  std::string path;
  H5O_type_t type;
};

struct Attribute {
  std::string object, name;
};

herr_t collect_node(hid_t, const char* name, const H5O_info_t* info, void* out) {
  static_cast<std::vector<Node>*>(out)->push_back({name, info->type});
  return 0;
}

herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

// A type the engine's files use, or one they do not.
hid_t pick_type(Bytes& in, bool* owned) {
  *owned = false;
  switch (in.in_range(0, 7)) {
    case 0:
      return H5T_NATIVE_INT8;
    case 1:
      return H5T_NATIVE_UINT8;
    case 2:
      return H5T_NATIVE_INT32;
    case 3:
      return H5T_NATIVE_INT64;
    case 4:
      return H5T_NATIVE_FLOAT;
    case 5:
      return H5T_NATIVE_DOUBLE;
    case 6:
      return H5T_NATIVE_UINT16;
    default: {
      const hid_t text = H5Tcopy(H5T_C_S1);
      H5Tset_size(text, H5T_VARIABLE);
      H5Tset_cset(text, H5T_CSET_UTF8);
      *owned = true;
      return text;
    }
  }
}

hid_t pick_space(Bytes& in, hsize_t* count) {
  const int rank = static_cast<int>(in.in_range(0, 3));
  hsize_t dims[3] = {0, 0, 0};
  *count = 1;
  for (int d = 0; d < rank; ++d) {
    dims[d] = static_cast<hsize_t>(in.pick(std::vector<int>{0, 1, 2, 3, 4, 7, 16, 100}));
    *count *= dims[d];
  }
  return rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, nullptr);
}

// The values: bytes of the input (numbers of every kind, NaN and infinities included), or
// short strings.
std::vector<uint8_t> values(Bytes& in, hid_t type, hsize_t count, std::vector<std::string>& texts,
                            std::vector<const char*>& pointers) {
  if (H5Tis_variable_str(type) > 0) {
    texts.resize(count);
    pointers.resize(count);
    for (hsize_t i = 0; i < count; ++i) {
      texts[i] = in.text(12);
      pointers[i] = texts[i].c_str();
    }
    return {};
  }
  std::vector<uint8_t> bytes(count * H5Tget_size(type));
  const auto given = in.raw(bytes.size());
  std::copy(given.begin(), given.end(), bytes.begin());
  return bytes;
}

// A type, a shape and values for a new dataset or attribute, released when it goes.
struct NewContents {
  explicit NewContents(Bytes& in) {
    type = pick_type(in, &owned_type);
    space = pick_space(in, &count);
    bytes = values(in, type, count, texts, pointers);
  }
  ~NewContents() {
    H5Sclose(space);
    if (owned_type) H5Tclose(type);
  }
  NewContents(const NewContents&) = delete;
  NewContents& operator=(const NewContents&) = delete;
  const void* data() const {
    return pointers.empty() ? static_cast<const void*>(bytes.data()) : pointers.data();
  }

  hid_t type = -1, space = -1;
  bool owned_type = false;
  hsize_t count = 0;
  std::vector<uint8_t> bytes;
  std::vector<std::string> texts;
  std::vector<const char*> pointers;
};

void write_dataset(hid_t parent, const std::string& name, Bytes& in) {
  const NewContents c(in);
  const hid_t dataset =
      H5Dcreate2(parent, name.c_str(), c.type, c.space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (dataset < 0) return;
  if (c.count > 0) H5Dwrite(dataset, c.type, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.data());
  H5Dclose(dataset);
}

void write_attribute(hid_t object, const std::string& name, Bytes& in) {
  const NewContents c(in);
  const hid_t attribute =
      H5Acreate2(object, name.c_str(), c.type, c.space, H5P_DEFAULT, H5P_DEFAULT);
  if (attribute < 0) return;
  if (c.count > 0) H5Awrite(attribute, c.type, c.data());
  H5Aclose(attribute);
}

// New values of the dataset's own type and shape (numbers only).
void refill_dataset(hid_t file, const std::string& path, Bytes& in) {
  const hid_t dataset = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  if (dataset < 0) return;
  const hid_t type = H5Dget_type(dataset), space = H5Dget_space(dataset);
  const hssize_t count = H5Sget_simple_extent_npoints(space);
  const H5T_class_t kind = H5Tget_class(type);
  if ((kind == H5T_INTEGER || kind == H5T_FLOAT || kind == H5T_ENUM) && count > 0 &&
      count < (1 << 20)) {
    std::vector<uint8_t> bytes(static_cast<size_t>(count) * H5Tget_size(type));
    const auto given = in.raw(bytes.size());
    std::copy(given.begin(), given.end(), bytes.begin());
    H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data());
  }
  H5Tclose(type);
  H5Sclose(space);
  H5Dclose(dataset);
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string leaf_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void mutate_hdf5(const std::string& base, const std::string& path, Bytes& in) {
  std::filesystem::copy_file(base, path, std::filesystem::copy_options::overwrite_existing);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return;
  const int changes = static_cast<int>(in.in_range(1, 4));
  for (int c = 0; c < changes && in.left() > 0; ++c) {
    std::vector<Node> nodes;
    H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_NATIVE, collect_node, &nodes,
              H5O_INFO_BASIC);  // "." is the root
    const Node node = in.pick(nodes);
    std::vector<std::string> attributes;
    H5Aiterate_by_name(file, node.path.c_str(), H5_INDEX_NAME, H5_ITER_NATIVE, nullptr,
                       collect_attribute, &attributes, H5P_DEFAULT);
    const bool is_root = node.path == ".";
    switch (in.in_range(0, 6)) {
      case 0:  // remove a group or dataset
        if (!is_root) H5Ldelete(file, node.path.c_str(), H5P_DEFAULT);
        break;
      case 1:  // remove an attribute
        if (!attributes.empty())
          H5Adelete_by_name(file, node.path.c_str(), in.pick(attributes).c_str(), H5P_DEFAULT);
        break;
      case 2:  // a dataset or group replaced by a dataset of another type or shape
        if (!is_root && H5Ldelete(file, node.path.c_str(), H5P_DEFAULT) >= 0) {
          const hid_t parent = H5Oopen(file, parent_of(node.path).c_str(), H5P_DEFAULT);
          if (parent >= 0) {
            write_dataset(parent, leaf_of(node.path), in);
            H5Oclose(parent);
          }
        }
        break;
      case 3:  // an attribute replaced by one of another type or shape
        if (!attributes.empty()) {
          const auto name = in.pick(attributes);
          const hid_t object = H5Oopen(file, node.path.c_str(), H5P_DEFAULT);
          if (object >= 0) {
            H5Adelete(object, name.c_str());
            write_attribute(object, name, in);
            H5Oclose(object);
          }
        }
        break;
      case 4:  // a dataset's values changed
        if (node.type == H5O_TYPE_DATASET) refill_dataset(file, node.path, in);
        break;
      case 5:  // a dataset replaced by a group, or a group emptied
        if (!is_root && H5Ldelete(file, node.path.c_str(), H5P_DEFAULT) >= 0) {
          const hid_t group =
              H5Gcreate2(file, node.path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
          if (group >= 0) H5Gclose(group);
        }
        break;
      default: {  // something added to a group, named like something the engine reads
        if (node.type != H5O_TYPE_GROUP) break;
        const hid_t group = H5Oopen(file, node.path.c_str(), H5P_DEFAULT);
        if (group < 0) break;
        std::string name = nodes.size() > 1 ? leaf_of(in.pick(nodes).path) : "x";
        if (name == ".") name = "step";
        if (in.flag()) {
          write_attribute(group, name, in);
        } else if (H5Lexists(group, name.c_str(), H5P_DEFAULT) <= 0) {
          write_dataset(group, name, in);
        }
        H5Oclose(group);
      }
    }
  }
  H5Fclose(file);
}

}  // namespace engine::fuzz
