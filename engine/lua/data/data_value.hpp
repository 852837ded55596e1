// Data pipelines and transforms as Lua values.
#pragma once

#include <memory>

#include "engine/data/batch.hpp"
#include "engine/data/pipeline.hpp"
#include "engine/data/transform.hpp"
#include "engine/lua/runtime/runtime.hpp"

namespace engine::lua {

struct PipelineBox {
  static constexpr char kTypeName[] = "Pipeline";  // one address in every file: the tag
  data::Pipeline pipeline;
};

struct TransformBox {
  static constexpr char kTypeName[] = "Transform";  // one address in every file: the tag
  std::shared_ptr<const data::Transform> transform;
};

// Pushes a batch as Lua sees it: {input, target, categorical}, class targets and category ids
// 1-based.
void push_batch(lua_State* L, const data::Batch& batch);

}  // namespace engine::lua
