// The function tables of require 'data', one per file of this folder, and the helpers those
// files share (a pipeline or transform in and out of Lua); library.cpp assembles the tables.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "engine/data/dataset_finder.hpp"
#include "engine/data/pipeline.hpp"
#include "engine/lua/data/data_value.hpp"
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/torch/tensor_value.hpp"

namespace engine::lua {

// The pipeline a method is called on (argument 1).
inline data::Pipeline& pipeline(lua_State* L, const char* function) {
  return check<PipelineBox>(L, 1, function).pipeline;
}
inline int push_pipeline(lua_State* L, data::Pipeline p) {
  push_new<PipelineBox>(L, PipelineBox{std::move(p)});
  return 1;
}
inline int push_transform(lua_State* L, std::shared_ptr<const data::Transform> t) {
  push_new<TransformBox>(L, TransformBox{std::move(t)});
  return 1;
}
// The folder of a named dataset, searched in the runtime's dataset folders, then the system's.
inline std::string find(lua_State* L, const std::string& name) {
  return data::find_dataset(name, data::dataset_roots(Runtime::from(L).options().dataset_dirs));
}

const Binding* sources_functions();     // data.mnist, data.find, ... (sources.cpp)
const Binding* csv_functions();         // data.csv (csv.cpp)
const Binding* csv_pipeline_methods();  // ds:stats(), ds:classes() (csv.cpp)
const Binding* transforms_functions();  // data.normalize, ... (transforms.cpp)

}  // namespace engine::lua
