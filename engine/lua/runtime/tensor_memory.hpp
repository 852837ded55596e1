// The memory of tensors that Lua holds. LuaJIT's collector sees a tensor's userdata (a few
// dozen bytes), not the megabytes behind it (its data, and through its autograd graph the
// activations saved for backward), so by itself it lets thousands of dead tensors pile up
// between cycles. Two remedies (docs/lua-api/tensor.md, "Memory"):
// - pacing: when the memory of CPU tensors (core::cpu_tensor_bytes) has grown by a threshold
//   since the last collection, the next tensor handed to Lua runs a full collection (Torch7
//   likewise ran its collector from the size of its tensor heap);
// - deterministic release: torch.scope(fn) releases the tensors made inside fn when it
//   returns, x:free() releases one now; the forward of a Lua module that C++ calls (the
//   trainer, evaluator, bench, a container) runs in such a scope too (LuaModuleImpl).
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "engine/lua/runtime/runtime.hpp"

namespace engine::lua {

// Called by push_tensor with the new userdata on top of the stack: counts its bytes towards
// the next collection (which may run here) and enrols it in the innermost torch.scope.
void track_pushed_tensor(lua_State* L, const torch::Tensor& tensor);

// The finalizer (__gc) of tensor userdata.
int gc_tensor(lua_State* L);
// Destroys the dead tensors the finalizer set aside; the Runtime calls it when it closes.
void release_deferred_tensors();

// The tensors handed to Lua on this thread while it is open (the innermost one enrols them), to
// be released when it closes: torch.scope's, and the one around a Lua module's forward.
class TensorScope {
 public:
  explicit TensorScope(lua_State* L);
  // Releases every tensor made inside (the call it covered failed) unless close() ran.
  ~TensorScope();
  TensorScope(const TensorScope&) = delete;
  TensorScope& operator=(const TensorScope&) = delete;

  // Releases the tensors made inside except kept ones (x:keep(), module fields) and those among
  // the stack values first..last (or inside them, when tables); those join the enclosing scope,
  // which they were made inside too. A scope closes once.
  void close(int first, int last);
  // close(index, index) for a forward's one result that goes to C++ (a Lua module called by the
  // trainer, the evaluator, bench or a container): C++ holds the tensor now, so the box Lua may
  // still reach keeps its data without its autograd graph. Left to the collector with its graph,
  // it kept every layer's saved activations and the parameters' gradient accumulators alive
  // after the step: a CUDA graph recorded then found the eager step's accumulators.
  void hand_over(int index);
  // Adds the tensor userdata on top of the stack to the list.
  void enrol();
  lua_State* state() const { return L_; }

 private:
  void close_scope(int first, int last, bool result_to_cpp);

  lua_State* L_;
  int list_ref_;  // registry reference of a Lua list of the tensor userdata made inside
  int count_ = 0;
  TensorScope* outer_;
  bool open_ = true;
};

// torch.scope, torch.memory_stats and the tensor methods free and keep are added to 'torch' by
// add_memory_functions (runtime/libraries.hpp).

// A full collection, run again while the last one let go of objects C++ had held (freeing a
// Lua-defined module releases its children's objects, nn/lua_module.hpp): Lua's collectgarbage()
// (install_full_collection) and pacing free a nest of modules at once, as PyTorch's
// reference counting would.
void full_collection(lua_State* L);
// What a sweep during a collection reports: n objects C++ no longer holds may go in the next.
void count_released_holds(int64_t n);
// The sweep full_collection runs before it collects (nn.core's, nn/lua_module.hpp): what it lets
// go needs no collection of its own to be seen.
void set_collection_sweep(void (*sweep)(lua_State* L));
// Makes the global collectgarbage() and collectgarbage('collect') a full_collection.
void install_full_collection(lua_State* L);

struct PacingStats {
  int64_t collections = 0;      // full collections the pacing ran in this thread
  int64_t growth_bytes = 0;     // CPU tensor memory above its low point since the last one
  int64_t threshold_bytes = 0;  // the next one runs when growth_bytes reaches this
};
PacingStats pacing_stats();

}  // namespace engine::lua
