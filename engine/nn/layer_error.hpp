// The error raised when a layer rejects its input: names the layer, where it sits in the
// model, the input shape, and libtorch's reason (which usually names the expected shape).
#pragma once

#include <string>

#include "engine/core/errors.hpp"

namespace engine::nn {

class LayerError : public core::ScriptError {
 public:
  // where: "model.lua:12: ", the script line that called the layer, when it is known
  LayerError(std::string path, std::string layer, std::string input_shape, std::string reason,
             std::string where = {});
  // The same error seen from a container one level up, whose child is named `child_name`.
  LayerError nested_in(const std::string& child_name) const;
  // The same error with the script line that called the layer; the first one given is kept.
  LayerError located(const std::string& where) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_, layer_, input_shape_, reason_, where_;
};

}  // namespace engine::nn
