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

// Pushes a batch as Lua sees it: {input, target, categorical, <named inputs>...}, class targets
// and category ids 1-based.
void push_batch(lua_State* L, const data::Batch& batch);
// Pushes a batch's inputs (Batch::named_inputs) as the model's forward receives them: one table
// by name, category ids 1-based.
void push_inputs(lua_State* L, const std::map<std::string, torch::Tensor>& inputs);
// The reverse: a tensor (the input) or a table of named inputs at `index` as a batch without
// target (category ids back to 0-based). ScriptError naming `what` for anything else.
data::Batch read_inputs(lua_State* L, int index, const std::string& what);

}  // namespace engine::lua
