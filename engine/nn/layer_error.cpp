#include "engine/nn/layer_error.hpp"

namespace engine::nn {
namespace {

std::string compose(const std::string& path, const std::string& layer, const std::string& shape,
                    const std::string& reason, const std::string& where) {
  std::string which = path.empty() ? "layer " + layer : "layer '" + path + "' " + layer;
  return where + which + " cannot take an input of shape " + shape + ": " + reason;
}

}  // namespace

LayerError::LayerError(std::string path, std::string layer, std::string input_shape,
                       std::string reason, std::string where)
    : core::ScriptError(compose(path, layer, input_shape, reason, where)),
      path_(std::move(path)),
      layer_(std::move(layer)),
      input_shape_(std::move(input_shape)),
      reason_(std::move(reason)),
      where_(std::move(where)) {}

LayerError LayerError::nested_in(const std::string& child_name) const {
  return LayerError(path_.empty() ? child_name : child_name + "." + path_, layer_, input_shape_,
                    reason_, where_);
}

LayerError LayerError::located(const std::string& where) const {
  return LayerError(path_, layer_, input_shape_, reason_, where_.empty() ? where : where_);
}

}  // namespace engine::nn
