#include "engine/lua/script/train_script_reader.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "engine/core/files.hpp"
#include "engine/core/format.hpp"
#include "engine/core/metric_names.hpp"
#include "engine/core/numbers.hpp"
#include "engine/core/regex.hpp"
#include "engine/lua/data/data_value.hpp"
#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/optim/optim_value.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/train_hooks.hpp"
#include "engine/lua/search/space_value.hpp"
#include "engine/lua/torch/tensor_value.hpp"
#include "engine/nn/parameter_slots.hpp"
#include "engine/train/metrics.hpp"
#include "engine/train/precision.hpp"

namespace engine::lua {
namespace {

const std::set<std::string> kTopLevelFields = {
    "name",           "description", "seed",      "hparams", "model",   "data",
    "loss",           "optimizer",   "scheduler", "metrics", "trainer", "train_batch",
    "evaluate_batch", "searcher",    "callbacks", "classes", "state"};

bool parse_number(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end && *end == '\0';
}

}  // namespace

TrainScript::TrainScript(Runtime& runtime, std::string path)
    : runtime_(runtime), path_(std::move(path)), spec_ref_(LUA_NOREF), hparams_ref_(LUA_NOREF) {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  runtime_.run_file(path_, 1);
  if (!lua_istable(L, -1)) {
    throw core::ScriptError(path_ + ": a training script must return a table (got " +
                            type_name(L, -1) + ")");
  }
  const int spec = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, spec) != 0) {
    lua_pop(L, 1);
    const std::string key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?";
    if (!kTopLevelFields.count(key)) {
      std::vector<std::string> known(kTopLevelFields.begin(), kTopLevelFields.end());
      throw core::ScriptError(path_ + ": unknown field '" + key +
                              "' in the returned table (known: " + core::join(known) + ")");
    }
  }
  raw_get(L, spec, "hparams");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushstring(L, "hparams");
    lua_pushvalue(L, -2);
    lua_rawset(L, spec);
  } else if (!lua_istable(L, -1)) {
    throw core::ScriptError(path_ + ": 'hparams' must be a table (got " + type_name(L, -1) + ")");
  }
  // name and description: strings (the run file's folder, the report's heading)
  for (const char* key : {"name", "description"}) {
    raw_get(L, spec, key);
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING) {
      throw core::ScriptError(path_ + ": '" + key + "' must be a string (got " + type_name(L, -1) +
                              ")");
    }
    // the name is the run folder's under --out: nothing may land outside it
    if (std::string(key) == "name" && lua_type(L, -1) == LUA_TSTRING) {
      try {
        core::check_path_name("the script's name", lua_tostring(L, -1));
      } catch (const core::UsageError& e) {
        throw core::ScriptError(path_ + ": " + e.what());
      }
    }
    lua_pop(L, 1);
  }
  hparams_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, spec);
  spec_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
}

TrainScript::~TrainScript() {
  hooks_.reset();
  lua_State* L = runtime_.state();
  luaL_unref(L, LUA_REGISTRYINDEX, spec_ref_);
  luaL_unref(L, LUA_REGISTRYINDEX, hparams_ref_);
}

void TrainScript::push_field(const char* key) const {
  lua_State* L = runtime_.state();
  lua_rawgeti(L, LUA_REGISTRYINDEX, spec_ref_);
  raw_get(L, -1, key);
  lua_remove(L, -2);
}

void TrainScript::push_hparams() const {
  lua_rawgeti(runtime_.state(), LUA_REGISTRYINDEX, hparams_ref_);
}

void TrainScript::call_field(const char* key, int nargs) const {
  lua_State* L = runtime_.state();
  push_field(key);
  if (lua_isfunction(L, -1)) {
    // where the function is written: an error raised in C++ below a tail call
    // (`return optim.SGD(params, {...})`) has no Lua line of its own to point at
    lua_Debug ar{};
    lua_pushvalue(L, -1);
    lua_getinfo(L, ">S", &ar);
    const std::string where = ar.linedefined > 0
                                  ? std::string(ar.short_src) + ":" + std::to_string(ar.linedefined)
                                  : std::string();
    lua_insert(L, -(nargs + 1));
    try {
      runtime_.call(nargs, 1);
    } catch (const core::ScriptError& e) {
      static const core::Regex kLocated(R"(^[^ :]+\.lua:\d+:)");
      if (where.empty() || kLocated.search(e.what())) throw;
      throw core::ScriptError(where + ": " + e.what() + " (in the script's '" + key + "')",
                              e.traceback(), e.exit_code());
    }
  } else {
    lua_insert(L, -(nargs + 1));
    lua_pop(L, nargs);
  }
}

std::string TrainScript::name() const {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  push_field("name");
  if (lua_type(L, -1) == LUA_TSTRING) return lua_tostring(L, -1);
  return std::filesystem::path(path_).stem().string();
}

std::string TrainScript::description() const {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  push_field("description");
  return lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
}

std::optional<uint64_t> TrainScript::seed() const {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  push_field("seed");
  if (lua_isnil(L, -1)) return std::nullopt;
  if (lua_type(L, -1) != LUA_TNUMBER || lua_tonumber(L, -1) < 0) {
    throw core::ScriptError(path_ + ": 'seed' must be a non-negative number");
  }
  return static_cast<uint64_t>(lua_tonumber(L, -1));
}

void TrainScript::for_each_hparam(const std::function<void(const std::string& name)>& visit) const {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  push_hparams();
  // depth first through nested tables of string keys: {optimizer = {lr = 0.1}} is optimizer.lr
  std::function<void(int, const std::string&)> walk = [&](int table, const std::string& prefix) {
    lua_pushnil(L);
    while (lua_next(L, table) != 0) {
      if (lua_type(L, -2) == LUA_TSTRING) {
        const std::string name = prefix + lua_tostring(L, -2);
        if (name.find('=') != std::string::npos) {
          // --set NAME=VALUE (and a search trial's overrides) split at the first '='
          throw core::ScriptError(path_ + ": hyperparameter '" + name +
                                  "': a name cannot hold '=' (--set NAME=VALUE splits at the "
                                  "first '='); rename it");
        }
        if (lua_type(L, -1) == LUA_TTABLE) {
          if (std::count(name.begin(), name.end(), '.') < 8) walk(lua_gettop(L), name + ".");
        } else {
          visit(name);
        }
      }
      lua_pop(L, 1);
    }
  };
  walk(lua_gettop(L), "");
}

std::map<std::string, io::HParam> TrainScript::hparams() const {
  lua_State* L = runtime_.state();
  std::map<std::string, io::HParam> out;
  for_each_hparam([&](const std::string& name) {
    switch (lua_type(L, -1)) {
      case LUA_TNUMBER:
        out[name] = lua_tonumber(L, -1);
        break;
      case LUA_TBOOLEAN:
        out[name] = static_cast<bool>(lua_toboolean(L, -1));
        break;
      case LUA_TSTRING:
        out[name] = std::string(lua_tostring(L, -1));
        break;
      default:
        break;  // functions, search spaces: not recorded as hyperparameters
    }
  });
  return out;
}

// Pushes the table that holds a (dotted) hyperparameter, hparams.optimizer for optimizer.lr,
// and returns the name's last part; pushes nil when a part on the way is not a table.
std::string TrainScript::push_holder(const std::string& key) const {
  lua_State* L = runtime_.state();
  push_hparams();
  size_t start = 0;
  for (size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', start)) {
    if (!lua_istable(L, -1)) break;
    raw_get(L, -1, key.substr(start, dot - start).c_str());
    lua_remove(L, -2);
    start = dot + 1;
  }
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_pushnil(L);
  }
  return key.substr(start);
}

// The script's type of a hyperparameter, as a value of that type's kind: what an assignment
// to it must fit. Throws UsageError (prefixed by `who`) when the script does not declare it or
// declares a table or a function.
int TrainScript::hparam_type(const std::string& key, const std::string& who) const {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  const std::string last = push_holder(key);
  if (lua_istable(L, -1)) {
    raw_get(L, lua_gettop(L), last.c_str());
  } else {
    lua_pushnil(L);
  }
  const int type = lua_type(L, -1);
  if (type == LUA_TNIL) {
    std::vector<std::string> known;
    for_each_hparam([&known](const std::string& name) { known.push_back(name); });
    std::sort(known.begin(), known.end());
    throw core::UsageError(
        who + ": unknown hyperparameter '" + key + "' (" + path_ + " declares: " +
        (known.empty() ? "none; the script has no hparams" : core::join(known)) + ")");
  }
  if (const auto* space = test_space(L, -1)) {  // a value for a searched hyperparameter
    if (space->kind != search::Space::Kind::kConst && space->kind != search::Space::Kind::kChoice) {
      return LUA_TNUMBER;
    }
    const auto& first = space->values.front();
    return std::holds_alternative<double>(first) ? LUA_TNUMBER
           : std::holds_alternative<bool>(first) ? LUA_TBOOLEAN
                                                 : LUA_TSTRING;
  }
  if (type != LUA_TNUMBER && type != LUA_TBOOLEAN && type != LUA_TSTRING) {
    throw core::UsageError(who + ": '" + key + "' is a " + lua_typename(L, type) +
                           " in the script; only numbers, booleans and strings can be set");
  }
  return type;
}

void TrainScript::assign_hparam(const std::string& key, const io::HParam& value) {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  const std::string last = push_holder(key);  // hparam_type found it: a table
  lua_pushstring(L, last.c_str());
  push_hparam(L, value);
  lua_rawset(L, -3);
}

void TrainScript::set_hparams(const std::map<std::string, io::HParam>& values,
                              const std::string& origin, const std::string& written_by) {
  static const char* const kKinds[] = {"a number", "a boolean", "a string"};
  std::vector<std::string> known;
  for_each_hparam([&known](const std::string& name) { known.push_back(name); });
  std::vector<std::string> unknown, mistyped;
  for (const auto& [key, value] : values) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      unknown.push_back(key);
      continue;
    }
    const int type = hparam_type(key, origin);
    const int expected = type == LUA_TNUMBER ? 0 : type == LUA_TBOOLEAN ? 1 : 2;
    if (static_cast<int>(value.index()) != expected)
      mistyped.push_back("'" + key + "' is " + kKinds[value.index()] + " there but " +
                         kKinds[expected] + " here");
  }
  if (!unknown.empty() || !mistyped.empty()) {
    std::string text = origin + ": the checkpoint was written by ";
    if (written_by.empty() || written_by == name()) {
      text += "another script or another version of " + path_ + ":";
    } else {
      text += "script '" + written_by + "', not by " + path_ + " ('" + name() + "'):";
    }
    if (!unknown.empty())
      text += " its hyperparameter" + std::string(unknown.size() == 1 ? " " : "s ") +
              core::join(unknown) + (unknown.size() == 1 ? " does" : " do") + " not exist here";
    if (!mistyped.empty())
      text += std::string(unknown.empty() ? " " : "; ") + core::join(mistyped, "; ");
    std::sort(known.begin(), known.end());
    text += " (" + path_ + " declares: " + (known.empty() ? "none" : core::join(known)) + ")";
    throw core::DataError(text);
  }
  for (const auto& [key, value] : values) assign_hparam(key, value);
}

void TrainScript::apply_overrides(const std::vector<std::string>& assignments) {
  for (const auto& assignment : assignments) {
    const std::string who = "--set " + assignment;
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) throw core::UsageError(who + ": expected key=value");
    const std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
    const int type = hparam_type(key, who);
    io::HParam value = text;
    if (type == LUA_TNUMBER) {
      double number = 0;
      if (!parse_number(text, &number)) {
        throw core::UsageError(who + ": '" + key + "' is a number in the script, got '" + text +
                               "'");
      }
      value = number;
    } else if (type == LUA_TBOOLEAN) {
      if (text != "true" && text != "false") {
        throw core::UsageError(who + ": '" + key + "' is a boolean in the script (true or false)");
      }
      value = text == "true";
    }
    assign_hparam(key, value);
  }
}

// A misspelt split (validaton = ...) would train without validation and say nothing: every key
// of the table data() returns must be one the trainer reads.
// Errors of the option readers name the option, not the script: build() adds the script.
train::TrainSpec TrainScript::build(torch::Device device, uint64_t seed) {
  try {
    return build_spec(device, seed);
  } catch (const core::UsageError& e) {
    if (std::string(e.what()).rfind(path_, 0) == 0) throw;
    throw core::UsageError(path_ + ": " + e.what());
  } catch (const core::ScriptError& e) {
    const std::string what = e.what();
    if (what.rfind(path_, 0) == 0 || what.find(".lua:") != std::string::npos) throw;
    throw core::ScriptError(path_ + ": " + what, e.traceback(), e.exit_code());
  }
}

train::TrainSpec TrainScript::build_spec(torch::Device device, uint64_t seed) {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  train::TrainSpec spec;
  spec.name = name();
  spec.description = description();
  spec.seed = seed;
  spec.device = device;
  const auto searched = search_space().spaces;
  if (!searched.empty()) {
    const auto& [key, space] = *searched.begin();
    throw core::UsageError(path_ + ": hyperparameter '" + key + "' is a search space (" +
                           space.describe() + "): engine search runs this script, or give it a " +
                           "value with --set " + key + "=...");
  }
  spec.hparams = hparams();
  hooks_ = std::make_unique<LuaHooks>(runtime_, path_);
  // math.random follows the run's seed, and checkpoints keep its state
  auto& random = runtime_.random();
  random.reseed(seed);
  spec.generators.push_back({"lua_math_random", [&random] { return random.state(); },
                             [&random](const torch::Tensor& s) { random.set_state(s); }});
  push_hparams();
  hooks_->set_ctx_field("hp", -1);
  lua_pop(L, 1);

  read_model(device, spec);
  read_data(spec);
  read_class_names(spec);
  read_loss(spec);
  read_optimizer(spec);  // left on the stack for the scheduler
  read_metrics(spec);
  read_scheduler(spec);
  lua_pop(L, 1);  // the optimizer
  read_script_state(spec);

  // train_batch, evaluate_batch, callbacks
  lua_rawgeti(L, LUA_REGISTRYINDEX, spec_ref_);
  hooks_->install(-1, spec);
  lua_pop(L, 1);
  if (!spec.loss && !spec.hooks.train_batch) {
    throw core::ScriptError(path_ +
                            ": the script defines no loss (loss = nn.CrossEntropyLoss(), "
                            "or a train_batch hook that computes one)");
  }

  // trainer(hp)
  push_hparams();
  call_field("trainer", 1);
  if (!lua_isnil(L, -1)) {
    if (!lua_istable(L, -1))
      throw core::ScriptError(path_ + ": 'trainer' must be a table of options or a function " +
                              "returning one (got " + type_name(L, -1) + ")");
    try {
      read_trainer_options(lua_gettop(L), spec.options);
    } catch (const core::Error& e) {
      throw_with_trainer_line(e);
    }
  }
  return spec;
}

void TrainScript::read_model(torch::Device device, train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  push_hparams();
  call_field("model", 1);
  auto* model = test_module(L, -1);
  if (!model)
    throw core::ScriptError(path_ + ": 'model' must be a module or a function returning one (got " +
                            type_name(L, -1) + ")");
  model->module()->to(device);
  spec.model = model_from(*model);
  hooks_->set_ctx_field("model", -1);
}

// data(hp) -> {train = pipeline, validation = pipeline}
// loss, or loss(hp); optional when train_batch computes its own
void TrainScript::read_loss(train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  push_hparams();
  call_field("loss", 1);
  if (auto* loss = test<LossBox>(L, -1)) {
    spec.loss = loss->loss;
    hooks_->set_ctx_field("loss", -1);
  } else if (!lua_isnil(L, -1)) {
    throw core::ScriptError(path_ + ": 'loss' must be a loss such as nn.NLLLoss() (got " +
                            type_name(L, -1) + ")");
  }
  lua_pop(L, 1);
}

void TrainScript::read_metrics(train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  // metrics = {'accuracy', 'top5', iou = function(output, target) ... end}, read before the
  // scheduler and trainer, whose watched metrics take a declared direction ({fn, mode = 'max'})
  push_field("metrics");
  if (lua_istable(L, -1)) {
    const int table = lua_gettop(L);
    const size_t n = lua_objlen(L, table);
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, table, static_cast<int>(i));
      if (lua_type(L, -1) != LUA_TSTRING)
        throw core::ScriptError(path_ + ": metrics[" + std::to_string(i) +
                                "] must be a metric name such as 'accuracy'");
      spec.metrics.push_back(lua_tostring(L, -1));
      lua_pop(L, 1);
      train::check_metric_name(spec.metrics.back());
    }
    lua_pushnil(L);
    while (lua_next(L, table) != 0) {
      if (lua_type(L, -2) == LUA_TSTRING) {
        const std::string metric = lua_tostring(L, -2);
        // iou = function(output, target) ... end, or {function ... end, mode = 'max'}, or
        // psnr = {mode = 'max'} for a value train_batch or evaluate_batch returns
        if (lua_istable(L, -1)) {
          raw_get(L, lua_gettop(L), "mode");
          const std::string mode = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
          lua_pop(L, 1);
          if (mode != "min" && mode != "max") {
            throw core::ScriptError(path_ + ": metrics." + metric +
                                    ".mode must be 'min' or 'max' (got '" + mode + "')");
          }
          core::declare_direction(metric, mode == "max");
          lua_rawgeti(L, -1, 1);
          lua_remove(L, -2);
          if (lua_isnil(L, -1)) {  // {mode = 'max'}: a value the hooks return, its direction only
            lua_pop(L, 1);
            continue;
          }
        }
        if (!lua_isfunction(L, -1)) {
          throw core::ScriptError(path_ + ": metrics." + metric +
                                  " must be a function(output, target) returning a number, "
                                  "{function, mode = 'max'}, or {mode = 'max'} for a value the "
                                  "hooks return");
        }
        try {
          core::check_path_name("metric", metric);  // each becomes a dataset of the run file
        } catch (const core::UsageError& e) {
          throw core::ScriptError(path_ + ": metrics: " + e.what());
        }
        spec.custom_metrics.push_back(hooks_->metric(metric, -1));
      }
      lua_pop(L, 1);
    }
  } else if (!lua_isnil(L, -1)) {
    throw core::ScriptError(path_ +
                            ": 'metrics' must be a list of names such as {'accuracy'} (got " +
                            type_name(L, -1) + ")");
  }
  lua_pop(L, 1);
}

}  // namespace engine::lua
