#include "engine/lua/nn/lua_module.hpp"

#include <optional>
#include <vector>

#include "engine/lua/data/data_value.hpp"
#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/runtime/tensor_memory.hpp"
#include "engine/lua/torch/tensor_value.hpp"

namespace engine::lua {
namespace {

thread_local std::vector<const torch::nn::Module*>
    running;                                        // Lua modules in forward, innermost last
thread_local std::optional<nn::LayerError> raised;  // the last layer error sent into Lua

// Counts a module as running forward for as long as it lives; a Lua error unwinds it too
// (LuaJIT runs C++ destructors as it unwinds, PLATFORM.md).
struct Running {
  explicit Running(const torch::nn::Module* m) { running.push_back(m); }
  ~Running() { running.pop_back(); }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
};

const char kObjectsKey = 0;  // registry key (its address) of the objects, weak, by module
const char kPinsKey = 0;     // registry key of the pinned objects, by module
const char kSweeperType[] = "LuaModulePinSweeper";

// A garbage userdata whose finalizer sweeps the pins and makes the next one: one sweep after
// every collection, until the state closes.
void push_sweeper(lua_State* L);

int sweeper_gc(lua_State* L) {
  if (!Runtime::closing(L)) {
    sweep_pins(L);
    push_sweeper(L);
    lua_pop(L, 1);
  }
  return 0;
}

void push_sweeper(lua_State* L) {
  lua_newuserdata(L, 1);
  if (luaL_newmetatable(L, kSweeperType)) {
    lua_pushcfunction(L, sweeper_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
}

}  // namespace

namespace {

// The module of the Lua frame that called a layer from Lua: its method's `self` (first local);
// nullptr when the frame is no such method (a tail call, `return self.head(x)`, leaves no frame:
// the caller's is seen instead).
const torch::nn::Module* calling_module(lua_State* L) {
  lua_Debug ar{};
  if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "Sl", &ar)) return nullptr;
  const torch::nn::Module* owner = nullptr;
  if (lua_getlocal(L, &ar, 1)) {
    if (lua_istable(L, -1)) {
      lua_pushliteral(L, "__cpp");
      lua_rawget(L, -2);
      auto* box = test_tagged<ModuleBox>(L, -1);
      if (box && box->tag == ModuleBox::kTypeName && !box->object.any.is_empty()) {
        owner = box->object.any.ptr().get();
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return owner;
}

}  // namespace

nn::LayerError layer_error_from_lua(const nn::LayerError& error, const torch::nn::Module& layer,
                                    lua_State* L) {
  raised.reset();
  const torch::nn::Module* owner = running.empty() ? nullptr : running.back();
  if (!owner && L) owner = calling_module(L);
  raised = error;
  if (owner) {
    for (const auto& item : owner->named_modules("", false)) {
      if (item.value().get() == &layer) {
        raised = error.nested_in(item.key());
        break;
      }
    }
  }
  // called by no Lua line (forward tail-called the layer): where the module's forward is
  lua_Debug ar{};
  const auto* lua_owner = dynamic_cast<const LuaModuleImpl*>(owner);
  if (lua_owner && L &&
      (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "S", &ar) || std::string(ar.what) == "C")) {
    raised = raised->located(lua_owner->forward_location());
  }
  return *raised;
}

LuaModuleImpl::LuaModuleImpl(lua_State* L, int object_index, std::string class_name)
    : torch::nn::Module(class_name), L_(L), class_name_(std::move(class_name)) {
  object_index = absolute_index(L, object_index);
  push_registry_table(L, &kObjectsKey, "v");
  lua_pushlightuserdata(L, this);
  lua_pushvalue(L, object_index);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  pin(L);  // its box is not the object's field yet
}

void LuaModuleImpl::pin(lua_State* L) {
  if (pinned_) return;
  push_registry_table(L, &kPinsKey, nullptr);
  lua_pushlightuserdata(L, this);
  push_object(L);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  pinned_ = true;
}

void sweep_pins(lua_State* L) {
  StackGuard guard(L);
  int64_t unpinned = 0;
  push_registry_table(L, &kPinsKey, nullptr);
  const int pins = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, pins) != 0) {
    // the module through the object's box, not the key: a box a script took away (rawset
    // __cpp) may have been collected with its module
    lua_pushliteral(L, "__cpp");
    lua_rawget(L, -2);
    auto* box = test_tagged<ModuleBox>(L, -1);
    LuaModuleImpl* module =
        box && box->tag == ModuleBox::kTypeName ? lua_module_in(box->object.any) : nullptr;
    // weak_from_this counts the shared owners: the box alone, or more
    const bool held = module && module->weak_from_this().use_count() > 1;
    if (held) module->held_ = true;
    if (!held) {
      // a hold C++ let go of (a freed parent's or container's, the trainer's) frees something
      // the next collection can reach; a pin made by a call from Lua alone does not
      if (!module || module->held_) ++unpinned;
      if (module) module->pinned_ = module->held_ = false;
      lua_pushvalue(L, -3);
      lua_pushnil(L);
      lua_rawset(L, pins);  // clearing the current field is allowed during lua_next
    }
    lua_pop(L, 2);
  }
  count_released_holds(unpinned);
}

LuaModuleImpl* lua_module_in(torch::nn::AnyModule& any) {
  // AnyModule's type, not a dynamic_cast of a copied shared_ptr: test_module asks on every call
  return !any.is_empty() && any.type_info() == typeid(LuaModuleImpl) ? &any.get<LuaModuleImpl>()
                                                                     : nullptr;
}

int module_box_gc(lua_State* L) {
  auto* box = test_tagged<ModuleBox>(L, 1);
  const bool parent = box && box->tag == ModuleBox::kTypeName && !box->object.any.is_empty() &&
                      !box->object.any.ptr()->children().empty();
  gc_userdata<ModuleBox>(L);
  // what held only through this module is let go now, not a collection later
  if (parent && !Runtime::closing(L)) sweep_pins(L);
  return 0;
}

void start_pin_sweeps(lua_State* L) {
  set_collection_sweep(sweep_pins);
  push_sweeper(L);
  lua_pop(L, 1);
}

void LuaModuleImpl::push_object(lua_State* L) const {
  push_registry_table(L, &kObjectsKey, "v");
  lua_pushlightuserdata(L, const_cast<LuaModuleImpl*>(this));
  lua_rawget(L, -2);
  lua_remove(L, -2);
  // a pin keeps the object while C++ holds this module: never expected
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    throw core::ScriptError("the Lua object of module " + class_name_ +
                            " was collected while the engine still held the module");
  }
}

namespace {

// object.forward, looked up in a protected call: a class's __index may raise a Lua error, which
// must not unwind through the C++ frames that ask (a layer error being raised)
int push_forward(lua_State* L) {
  lua_getfield(L, 1, "forward");
  return 1;
}

}  // namespace

std::string LuaModuleImpl::forward_location() const {
  StackGuard guard(L_);
  lua_pushcfunction(L_, push_forward);
  push_object(L_);
  if (lua_pcall(L_, 1, 1, 0) != 0 || !lua_isfunction(L_, -1)) return {};
  lua_Debug ar{};
  lua_getinfo(L_, ">S", &ar);
  if (ar.linedefined <= 0) return {};
  return std::string(ar.short_src) + ":" + std::to_string(ar.linedefined) + ": ";
}

void LuaModuleImpl::collect_garbage() const {
  full_collection(L_);
}

torch::Tensor LuaModuleImpl::forward(torch::Tensor input) {
  return call_forward([&] { push_tensor(L_, std::move(input)); });
}

torch::Tensor LuaModuleImpl::forward_inputs(const std::map<std::string, torch::Tensor>& inputs) {
  return call_forward([&] { push_inputs(L_, inputs); });
}

torch::Tensor LuaModuleImpl::call_forward(const std::function<void()>& push_argument) {
  // The object is callable (its __call runs forward), so the whole call, method lookup
  // included, happens inside the protected call.
  push_object(L_);
  push_argument();
  // The tensors forward makes are released when it returns, but for its result and module
  // fields: left to the collector, a Lua mlp's 64 KiB activations made its forward pass 1.08x
  // of the same layers in C++ in engine bench (1.04x released; docs/performance.md).
  TensorScope made_in_forward(L_);
  try {
    Running in_forward(this);
    Runtime::from(L_).call(1, 1);
  } catch (const core::ScriptError& e) {
    // a layer's error that crossed Lua: a LayerError again, with the Lua line that called it
    const std::string text = e.what();
    const auto at = raised ? text.find(raised->what()) : std::string::npos;
    if (at != std::string::npos) {
      // "model.lua:12: ", or where forward is written when the call was a tail call
      const auto error = raised->located(at > 0 ? text.substr(0, at) : forward_location());
      raised.reset();
      throw error;
    }
    throw;
  }
  torch::Tensor* out = test_tensor(L_, -1);
  if (!out) {
    const std::string got = type_name(L_, -1);
    lua_pop(L_, 1);
    throw core::ScriptError(
        class_name_ + ":forward returned a " + got +
        "; a module used as a layer or as the trained model must return a Tensor");
  }
  torch::Tensor result = *out;
  const int top = lua_gettop(L_);
  made_in_forward.hand_over(top);
  lua_pop(L_, 1);
  return result;
}

int forward_call(lua_State* L) {
  const int arguments = lua_gettop(L);
  const torch::nn::Module* module = nullptr;
  if (lua_istable(L, 1)) {
    raw_get(L, 1, "__cpp");
    auto* box = test_tagged<ModuleBox>(L, -1);
    if (box && box->tag == ModuleBox::kTypeName && !box->object.any.is_empty()) {
      module = box->object.any.ptr().get();
    }
    lua_pop(L, 1);
  }
  lua_getfield(L, 1, "forward");
  lua_insert(L, 1);
  std::optional<Running> in_forward;
  if (module) in_forward.emplace(module);
  lua_call(L, arguments, LUA_MULTRET);
  return lua_gettop(L);
}

}  // namespace engine::lua
