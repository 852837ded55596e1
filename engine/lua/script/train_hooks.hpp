// The Lua side of a training run: Determined-style train_batch / evaluate_batch hooks, the
// callbacks, metrics written as Lua functions, and the `ctx` table they all receive.
#pragma once

#include <string>
#include <vector>

#include "engine/lua/runtime/runtime.hpp"
#include "engine/train/spec.hpp"

namespace engine::lua {

class LuaHooks {
 public:
  explicit LuaHooks(Runtime& runtime, std::string script_path);
  ~LuaHooks();
  LuaHooks(const LuaHooks&) = delete;
  LuaHooks& operator=(const LuaHooks&) = delete;

  // ctx[name] = the value at index (model, loss, optimizer, scheduler, hp).
  void set_ctx_field(const char* name, int index);
  // Pushes ctx[name].
  void push_ctx_field(const char* name);
  // Reads train_batch, evaluate_batch and callbacks from the script's table at `spec` into
  // spec.hooks. Throws ScriptError naming the field for a value of the wrong type.
  void install(int spec, train::TrainSpec& out);
  // A metric computed by the Lua function at index: fn(output, target) -> number.
  train::CustomMetric metric(const std::string& name, int index);

 private:
  int keep(int index);  // a registry reference to the value at index, released with this
  void enter(train::StepContext& ctx);  // points ctx at the trainer for one call
  train::BatchResult call_batch_hook(int ref, const char* name, train::StepContext& ctx,
                                     const data::Batch& batch);
  void call_callback(int ref, train::StepContext& ctx, const std::map<std::string, double>* values,
                     const std::string* path);

  Runtime& runtime_;
  std::string path_;
  int ctx_ref_;
  std::vector<int> refs_;
};

}  // namespace engine::lua
