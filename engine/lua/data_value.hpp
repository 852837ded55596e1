// Data pipelines and transforms as Lua values.
#pragma once

#include <memory>

#include "engine/data/pipeline.hpp"
#include "engine/data/transform.hpp"

namespace engine::lua {

struct PipelineBox {
  static constexpr const char* kTypeName = "Pipeline";
  data::Pipeline pipeline;
};

struct TransformBox {
  static constexpr const char* kTypeName = "Transform";
  std::shared_ptr<const data::Transform> transform;
};

}  // namespace engine::lua
