#include "engine/lua/runtime/tensor_memory.hpp"

#include <cstring>

#include <algorithm>
#include <limits>
#include <unordered_set>
#include <vector>

#include "engine/core/memory.hpp"
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/torch/tensor_value.hpp"

namespace engine::lua {
namespace {

// A collection runs once the CPU tensor memory has grown this much above its lowest point since
// the last one (core::cpu_tensor_bytes counts every CPU tensor, so memory that a small tensor
// holds on to through its autograd graph counts too). Dead tensors that wait for a collection
// push the live ones out of the caches: on the mlp training step every 15 MiB was 20% slower
// than every 4 MiB; on the mlp forward pass at batch 64 (a 2.5 KiB output a step, 2 threads)
// every 4 MiB (1,500 dead outputs) was 8-10% behind the C++ loop, and so is a C++ loop that
// keeps its last 1,500 outputs, while every 1 MiB ran within 3-5% (docs/performance.md).
// Every 256 KiB cost the mlp training step at batch 64 3% (the collections' own work).
constexpr int64_t kMinThreshold = int64_t{1} << 20;
// The threshold is at least this many times the Lua heap: a full collection costs in
// proportion to the heap (about 25 us for the 110 KiB a training script holds), so this bounds
// the collector's share of the work, however large the heap grows (with a 20 MiB heap of
// script records, the mlp and mnist_cnn training steps from a Lua loop ran the same at 4 times
// as at 16 times, 6 alternating rounds) ...
constexpr int64_t kHeapMultiple = 4;
// ... and at least this fraction of the tensor memory left after the last collection, as Lua's
// own collector lets garbage grow in proportion to what is live.
constexpr int64_t kLiveDivisor = 2;
// A new tensor with an autograd graph behind it keeps the graph's nodes alive until it dies: a
// few kilobytes of small C++ objects that no tensor count sees. Each one is charged this much
// towards the next collection. Measured on the mlp step at batch 16 in a Lua loop (two such
// tensors a step, 60 KiB of tensors): collecting every 64 steps or more often ran level with
// torch.scope, never collecting was 18% slower. A sixty-fourth of the minimum threshold keeps
// that cadence (one collection per 64 such tensors when nothing else counts).
constexpr int64_t kGraphCharge = kMinThreshold / 64;
// How deep torch.scope looks into returned tables for tensors to keep.
constexpr int kKeepDepth = 8;
// The collector finalizes dead tensors a few thousand at a time. Destroying them there freed
// their blocks in one burst, into glibc's slower bins (about 650 instructions more per small op
// than freeing each result at once, as C++ does). So the finalizer sets small tensors aside and
// each new tensor handed to Lua destroys one of them: frees and allocations alternate, as in a
// C++ loop. Only tensors whose storage is this small and that carry no autograd graph wait, at
// most kDeferredMax of them and kDeferredMaxBytes in all. Small tensors now have lists of their
// own (core/small_blocks.hpp), and alternating still saves a little: 6,930 instructions per
// add on 16-element tensors against 6,988 without (callgrind); 65,536 waiting at most instead
// of 8,192 made no difference.
constexpr int64_t kDeferMaxBytes = 4096;
constexpr size_t kDeferredMax = 8192;
constexpr int64_t kDeferredMaxBytes = int64_t{4} << 20;

struct DeferredTensor {
  torch::Tensor tensor;
  int64_t bytes;  // its storage's, if on the CPU (a shared storage is rare, and small)
};

struct Pacing {
  int64_t low =
      std::numeric_limits<int64_t>::max();  // lowest CPU tensor memory since the last collection
  int64_t uncounted = 0;  // since then: bytes of new tensors on other devices, graph charges
  int64_t threshold = kMinThreshold;
  int64_t collections = 0;
  TensorScope* scope = nullptr;          // the innermost scope open on this thread
  std::vector<DeferredTensor> deferred;  // dead small tensors waiting to be destroyed
  int64_t deferred_bytes = 0;            // the CPU memory that destroying them gives back
};
thread_local Pacing pacing;
thread_local int64_t released_holds = 0;         // count_released_holds's sum
void (*collection_sweep)(lua_State*) = nullptr;  // set_collection_sweep's

int64_t tensor_bytes(const torch::Tensor& t) {
  return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0;
}

void destroy_last_deferred() {
  pacing.deferred_bytes -= pacing.deferred.back().bytes;
  pacing.deferred.pop_back();
}

// CPU tensor memory less the dead tensors set aside: what pacing compares with its threshold.
// Counting those would let garbage raise the threshold that decides when garbage goes: after a
// collection the tensors it found dead are all still in the count, and a threshold made from
// that count grew with every collection (a Lua inference loop at batch 64 kept 2,000 dead
// outputs alive after 4,000 steps, and pacing no longer collected at all).
int64_t paced_bytes() {
  return core::cpu_tensor_bytes() - pacing.deferred_bytes;
}

void collect(lua_State* L) {
  full_collection(L);
  ++pacing.collections;
  pacing.uncounted = 0;
  pacing.low = paced_bytes();
  const int64_t heap = int64_t{lua_gc(L, LUA_GCCOUNT, 0)} * 1024;
  pacing.threshold = std::max({kMinThreshold, kHeapMultiple * heap, pacing.low / kLiveDivisor});
}

// What the CPU count does not see: other devices' memory and autograd graphs. Only new
// tensors count (a handle to one that something else holds too, such as a parameter or a
// gradient, brings nothing new).
void charge(const torch::Tensor& tensor) {
  if (tensor.use_count() == 1) {
    if (!tensor.is_cpu()) pacing.uncounted += tensor_bytes(tensor);
    if (tensor.requires_grad() && !tensor.is_leaf()) pacing.uncounted += kGraphCharge;
  }
}

// A full collection once what became garbage since the last one may reach the threshold.
void collect_if_due(lua_State* L) {
  const int64_t held = paced_bytes();
  pacing.low = std::min(pacing.low, held);
  if (held - pacing.low + pacing.uncounted >= pacing.threshold) collect(L);
}

void release_box(Tagged<TensorBox>* box, const char* released_tag) {
  if (box->tag != TensorBox::kTypeName) return;
  const auto& t = box->object.tensor;
  if (t.use_count() == 1 && t.requires_grad() && !t.is_leaf()) {  // its graph goes now
    pacing.uncounted = std::max<int64_t>(0, pacing.uncounted - kGraphCharge);
  }
  box->tag = released_tag;
  box->object.~TensorBox();
}

// Collects the tensors at index, or inside the table at index (raw access: no metamethod runs).
void find_tensors(lua_State* L, int index, int depth, std::unordered_set<const void*>& tensors,
                  std::unordered_set<const void*>& tables) {
  index = absolute_index(L, index);
  if (auto* box = test_tagged<TensorBox>(L, index)) {
    tensors.insert(box);
    return;
  }
  if (lua_type(L, index) != LUA_TTABLE || depth >= kKeepDepth) return;
  if (!tables.insert(lua_topointer(L, index)).second) return;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    find_tensors(L, -1, depth + 1, tensors, tables);
    lua_pop(L, 1);
  }
}

// torch.scope(fn, ...): fn(...)'s results, with the tensors made inside fn released when it
// returns (or raises), except those it returns and those kept (x:keep(), module fields).
int t_scope(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  int status = 0;
  int results = 0;
  {
    TensorScope scope(L);
    status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    results = status == 0 ? lua_gettop(L) : 0;
    guarded(L, [&] {
      scope.close(1, results);
      return 0;
    });
  }
  if (status != 0) return lua_error(L);
  return results;
}

// x:free(): releases the tensor now; later uses of x raise an error. Freeing twice is harmless.
int m_free(lua_State* L) {
  auto* box = test_tagged<TensorBox>(L, 1);
  if (!box) {
    return guarded(L, [&]() -> int {
      throw ArgumentError("bad argument #1 to 'free' (Tensor expected, got " + type_name(L, 1) +
                          ")");
    });
  }
  release_box(box, kReleasedTag);
  return 0;
}

// x:keep(): x outlives the torch.scope it was made in (module fields are kept this way).
int m_keep(lua_State* L) {
  return guarded(L, [&] {
    check<TensorBox>(L, 1, "keep").pinned = true;
    lua_settop(L, 1);
    return 1;
  });
}

void set_number(lua_State* L, const char* key, double value) {
  lua_pushnumber(L, value);
  lua_setfield(L, -2, key);
}

// torch.memory_stats(): what the process and Lua's tensors hold, in bytes.
int t_memory_stats(lua_State* L) {
  lua_createtable(L, 0, 8);
  set_number(L, "lua_heap_bytes", lua_gc(L, LUA_GCCOUNT, 0) * 1024.0 + lua_gc(L, LUA_GCCOUNTB, 0));
  set_number(L, "cpu_tensor_bytes", static_cast<double>(core::cpu_tensor_bytes()));
  set_number(L, "collection_threshold_bytes", static_cast<double>(pacing.threshold));
  set_number(L, "paced_collections", static_cast<double>(pacing.collections));
  set_number(L, "resident_bytes", static_cast<double>(core::resident_bytes()));
  set_number(L, "peak_resident_bytes", static_cast<double>(core::peak_resident_bytes()));
  lua_pushstring(L, core::allocator_name(core::allocator_in_use()));
  lua_setfield(L, -2, "allocator");
  return 1;
}

}  // namespace

int gc_tensor(lua_State* L) {
  auto* box = test_tagged<TensorBox>(L, 1);
  if (!box || box->tag != TensorBox::kTypeName) return 0;
  box->tag = kReleasedTag;
  torch::Tensor& t = box->object.tensor;
  // a tensor with an autograd graph behind it goes at once: the graph may hold megabytes
  const int64_t bytes = t.has_storage() ? static_cast<int64_t>(t.storage().nbytes()) : -1;
  if (t.use_count() == 1 && bytes >= 0 && bytes <= kDeferMaxBytes && !t.requires_grad() &&
      pacing.deferred.size() < kDeferredMax && pacing.deferred_bytes + bytes <= kDeferredMaxBytes) {
    const int64_t cpu_bytes = t.is_cpu() ? bytes : 0;
    pacing.deferred.push_back({std::move(t), cpu_bytes});
    pacing.deferred_bytes += cpu_bytes;
  }
  box->object.~TensorBox();
  return 0;
}

void release_deferred_tensors() {
  pacing.deferred.clear();
  pacing.deferred_bytes = 0;
}

void track_pushed_tensor(lua_State* L, const torch::Tensor& tensor) {
  if (!pacing.deferred.empty()) {
    destroy_last_deferred();
    // one a push matches the rate they die at; two once a backlog builds up
    if (pacing.deferred.size() > kDeferredMax / 2) destroy_last_deferred();
  }
  if (pacing.scope && pacing.scope->state() == L) {
    pacing.scope->enrol();
    // The scope holds it until it closes and releases it then: a collection now could not free
    // it (the scope's list refers to it), so it does not count towards one. Counted, a Lua
    // module's forward (always in a scope) ran a full collection after nearly every layer on
    // CUDA, where each output is more than the threshold: 177 of them, about 60 us each, made
    // ResNet-50's inference step host-bound (22 ms a batch of 64 where the GPU needs 11).
    pacing.low = std::min(pacing.low, paced_bytes());
    return;
  }
  charge(tensor);
  collect_if_due(L);
}

TensorScope::TensorScope(lua_State* L) : L_(L), outer_(pacing.scope) {
  lua_newtable(L);
  list_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  pacing.scope = this;
}

TensorScope::~TensorScope() {
  if (!open_) return;
  try {
    close(1, 0);
  } catch (...) {  // out of memory: the tensors are left to the collector
  }
}

void TensorScope::enrol() {
  lua_rawgeti(L_, LUA_REGISTRYINDEX, list_ref_);
  lua_pushvalue(L_, -2);
  lua_rawseti(L_, -2, ++count_);
  lua_pop(L_, 1);
}

void TensorScope::close(int first, int last) {
  close_scope(first, last, false);
}

void TensorScope::hand_over(int index) {
  close_scope(index, index, true);
}

void TensorScope::close_scope(int first, int last, bool result_to_cpp) {
  if (!open_) return;
  open_ = false;
  pacing.scope = outer_;
  StackGuard guard(L_);  // also when listing the kept ones runs out of memory
  lua_rawgeti(L_, LUA_REGISTRYINDEX, list_ref_);
  luaL_unref(L_, LUA_REGISTRYINDEX, list_ref_);
  const int list = lua_gettop(L_);
  // one tensor result (a module's forward) needs no sets
  const void* result = first == last ? test_tagged<TensorBox>(L_, first) : nullptr;
  std::unordered_set<const void*> kept, tables;
  if (!result) {
    for (int i = first; i <= last; ++i) find_tensors(L_, i, 0, kept, tables);
  }
  TensorScope* outer = outer_ && outer_->L_ == L_ ? outer_ : nullptr;
  bool escaped = false;
  for (int i = 1; i <= count_; ++i) {
    lua_rawgeti(L_, list, i);
    auto* box = test_tagged<TensorBox>(L_, -1);
    if (box && box->tag == TensorBox::kTypeName && !box->object.pinned) {
      if (box != result && !kept.count(box)) {
        release_box(box, kScopeReleasedTag);
      } else if (result_to_cpp && box == result) {
        auto& tensor = box->object.tensor;
        if (tensor.requires_grad() && !tensor.is_leaf()) tensor = tensor.detach();
        if (outer) outer->enrol();  // not charged: its data is the C++ result's
      } else if (outer) {
        outer->enrol();
      } else {
        charge(box->object.tensor);  // out of every scope: paced as if pushed there
        escaped = true;
      }
    }
    lua_pop(L_, 1);
  }
  // The results leave the last scope: counted now, as pushes outside one are. A loop whose
  // tensors are all made in scopes (torch.scope around each step, returning its output) never
  // collected otherwise, and each step faulted fresh pages in for its outputs: 31 ms to clone a
  // 15.7 MB tensor in a scope against 2 ms outside one.
  lua_pop(L_, 1);
  if (escaped) collect_if_due(L_);
}

void add_memory_functions(lua_State* L, int library) {
  static const Binding functions[] = {
      {"scope", t_scope}, {"memory_stats", t_memory_stats}, {nullptr, nullptr}};
  static const Binding methods[] = {{"free", m_free}, {"keep", m_keep}, {nullptr, nullptr}};
  library = absolute_index(L, library);
  lua_pushvalue(L, library);
  set_bindings(L, functions);
  lua_pop(L, 1);
  extend_type(L, TensorBox::kTypeName, methods, nullptr);
}

void count_released_holds(int64_t n) {
  released_holds += n;
}

void set_collection_sweep(void (*sweep)(lua_State* L)) {
  collection_sweep = sweep;
}

void full_collection(lua_State* L) {
  if (collection_sweep) collection_sweep(L);
  // one more round per level of nesting (a ResNet of Lua blocks: three or four)
  constexpr int kMostRounds = 64;
  for (int round = 0; round < kMostRounds; ++round) {
    const int64_t before = released_holds;
    lua_gc(L, LUA_GCCOLLECT, 0);
    if (released_holds == before) break;
  }
}

namespace {

// collectgarbage(opt, ...): 'collect' (the default) is a full_collection; every other option is
// Lua's own (the upvalue).
int l_collectgarbage(lua_State* L) {
  const char* option = luaL_optstring(L, 1, "collect");
  if (std::strcmp(option, "collect") == 0) {
    full_collection(L);
    lua_pushinteger(L, 0);
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

}  // namespace

void install_full_collection(lua_State* L) {
  lua_getglobal(L, "collectgarbage");
  lua_pushcclosure(L, l_collectgarbage, 1);
  lua_setglobal(L, "collectgarbage");
}

PacingStats pacing_stats() {
  return {pacing.collections, paced_bytes() - pacing.low, pacing.threshold};
}

}  // namespace engine::lua
