// The `trainer` table of a training script (train_script_reader.cpp reads the rest): its options
// checked one by one, and an error about one of them given the line of the script it is on.
#include <algorithm>

#include "engine/core/files.hpp"
#include "engine/core/numbers.hpp"
#include "engine/core/regex.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/train_script_reader.hpp"
#include "engine/train/metrics.hpp"
#include "engine/train/precision.hpp"

namespace engine::lua {
namespace {

const char* const kTrainerOptions[] = {
    "epochs",           "steps",       "validate_every", "log_every",      "checkpoint_every",
    "keep_checkpoints", "keep_best",   "clip_grad_norm", "clip_norm_type", "clip_grad_value",
    "accumulate",       "precision",   "loss_scale",     "early_stopping", "on_nan",
    "sync_batchnorm",   "cuda_graphs", "memory_format"};

}  // namespace

int64_t field_key_line(const std::string& text, const std::string& field, const std::string& key) {
  if (key.empty()) return 0;
  const auto field_at = core::Regex("(^|[^A-Za-z0-9_])" + field + R"(\s*=)").search(text);
  if (!field_at) return 0;
  const size_t from = field_at->position;
  // the key is the script's own text (a misspelt option may hold any character): escaped
  const auto key_at = core::Regex("(^|[^A-Za-z0-9_])" + core::Regex::escape(key) + R"(\s*=[^=])")
                          .search(text.substr(from));
  if (!key_at) return 0;
  const auto at = from + key_at->position + key_at->groups[1].size();
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
}

void TrainScript::throw_with_trainer_line(const core::Error& error) const {
  // the trainer option the message is about: a misspelt one it quotes, else the first option
  // it names (before any list of the accepted ones)
  std::string message = error.what(), key;
  const std::string unknown = "unknown option '";
  if (const auto at = message.find(unknown); at != std::string::npos) {
    const auto start = at + unknown.size();
    key = message.substr(start, message.find('\'', start) - start);
  } else {
    const std::string named = message.substr(0, message.find(" (accepted"));
    size_t first = std::string::npos;
    for (const char* name : kTrainerOptions) {
      for (const char* before : {"'", " "}) {
        const auto at = named.rfind(name, 0) == 0 ? 0 : named.find(before + std::string(name));
        if (at < first) {
          first = at;
          key = name;
        }
      }
    }
  }
  if (message.rfind(path_, 0) == 0) message = message.substr(path_.size() + 2);
  std::string text;
  try {
    const auto bytes = core::read_file(path_);
    text.assign(bytes.begin(), bytes.end());
  } catch (const core::Error&) {
  }
  const int64_t line = field_key_line(text, "trainer", key);
  message = path_ + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + message;
  if (dynamic_cast<const core::UsageError*>(&error)) throw core::UsageError(message);
  throw core::ScriptError(message, {}, error.exit_code());
}

void TrainScript::read_trainer_options(int t, train::TrainerOptions& opts) const {
  lua_State* L = runtime_.state();
  Options o(L, t, "trainer",
            std::vector<const char*>(std::begin(kTrainerOptions), std::end(kTrainerOptions)));
  opts.epochs = o.integer("epochs", 1);
  opts.steps = o.integer("steps", 0);
  opts.log_every = o.integer("log_every", 50);
  if (opts.epochs < 1 || opts.steps < 0 || opts.log_every < 1) {
    throw core::ScriptError(path_ + ": trainer epochs and log_every must be >= 1, steps >= 0");
  }
  for (const auto& [key, value] : {std::pair{"epochs", opts.epochs}, {"steps", opts.steps}}) {
    if (value > core::kMaxCount) {
      throw core::ScriptError(path_ + ": trainer " + key + " must be at most 2^53 (" +
                              std::to_string(core::kMaxCount) + "), got " + std::to_string(value));
    }
  }
  read_every(t, opts);
  auto& ck = opts.checkpoint;
  if (ck.keep_last != 0) {
    ck.keep_last = o.integer("keep_checkpoints", 2);
    if (ck.keep_last < 1)
      throw core::ScriptError(path_ + ": trainer keep_checkpoints must be >= 1");
  }
  if (o.has("keep_best"))
    ck.keep_best = train::parse_goal(o.string("keep_best", "validation.loss"));

  opts.accumulate = o.integer("accumulate", 1);
  if (opts.accumulate < 1) throw core::ScriptError(path_ + ": trainer accumulate must be >= 1");
  opts.precision = train::parse_precision(o.string("precision", "float32"));
  read_loss_scale(t, opts.loss_scale);
  opts.clip_grad_norm = o.number("clip_grad_norm", 0);
  opts.clip_norm_type = o.number("clip_norm_type", 2);
  opts.clip_grad_value = o.number("clip_grad_value", 0);
  if (opts.clip_grad_norm < 0 || opts.clip_grad_value < 0) {
    throw core::ScriptError(path_ + ": trainer clip_grad_norm and clip_grad_value must be > 0");
  }
  const std::string on_nan = o.string("on_nan", "error");
  if (on_nan != "error" && on_nan != "skip") {
    throw core::ScriptError(path_ + ": trainer on_nan must be 'error' or 'skip', got '" + on_nan +
                            "'");
  }
  opts.on_nan = on_nan == "skip" ? train::NanPolicy::kSkip : train::NanPolicy::kError;
  opts.sync_batchnorm = o.boolean("sync_batchnorm", false);
  opts.cuda_graphs = o.boolean("cuda_graphs", false);
  const std::string memory_format = o.string("memory_format", "contiguous");
  if (memory_format != "contiguous" && memory_format != "channels_last") {
    throw core::ScriptError(path_ +
                            ": trainer memory_format must be 'contiguous' or "
                            "'channels_last', got '" +
                            memory_format + "'");
  }
  opts.channels_last = memory_format == "channels_last";

  read_early_stopping(t, opts);
}

// validate_every = 'epoch' | N steps; checkpoint_every = 'epoch' | N steps | false
void TrainScript::read_every(int t, train::TrainerOptions& opts) const {
  lua_State* L = runtime_.state();
  auto& ck = opts.checkpoint;
  raw_get(L, t, "validate_every");
  if (lua_type(L, -1) == LUA_TNUMBER) {
    opts.validate_every_steps = core::exact_int64(lua_tonumber(L, -1)).value_or(0);
    if (opts.validate_every_steps < 1)
      throw core::ScriptError(
          path_ + ": trainer validate_every must be 'epoch' or a positive number of steps");
  } else if (!lua_isnil(L, -1) &&
             !(lua_type(L, -1) == LUA_TSTRING && std::string(lua_tostring(L, -1)) == "epoch")) {
    throw core::ScriptError(path_ +
                            ": trainer validate_every must be 'epoch' or a number of steps");
  }
  lua_pop(L, 1);

  // checkpoint_every = 'epoch' | N steps | false
  raw_get(L, t, "checkpoint_every");
  if (lua_type(L, -1) == LUA_TNUMBER) {
    ck.every_epoch = false;
    ck.every_steps = core::exact_int64(lua_tonumber(L, -1)).value_or(0);
    if (ck.every_steps < 1)
      throw core::ScriptError(path_ +
                              ": trainer checkpoint_every must be 'epoch', a positive "
                              "number of steps or false");
  } else if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
    ck.every_epoch = false;
    ck.keep_last = 0;  // no checkpoints at all
  } else if (!lua_isnil(L, -1) &&
             !(lua_type(L, -1) == LUA_TSTRING && std::string(lua_tostring(L, -1)) == "epoch")) {
    throw core::ScriptError(
        path_ + ": trainer checkpoint_every must be 'epoch', a number of steps or false");
  }
  lua_pop(L, 1);
}

void TrainScript::read_early_stopping(int t, train::TrainerOptions& opts) const {
  lua_State* L = runtime_.state();
  // early_stopping = {metric = 'validation.loss', patience = 3, min_delta = 0, mode = 'min'}
  raw_get(L, t, "early_stopping");
  if (lua_istable(L, -1)) {
    Options es(L, lua_gettop(L), "trainer.early_stopping",
               {"metric", "patience", "min_delta", "mode"});
    train::EarlyStopping stopping;
    stopping.goal =
        train::parse_goal(es.string("metric", "validation.loss"), es.string("mode", ""));
    stopping.patience = es.integer("patience", 3);
    stopping.min_delta = es.number("min_delta", 0);
    if (stopping.patience < 1 || stopping.min_delta < 0) {
      throw core::ScriptError(path_ + ": early_stopping patience must be >= 1, min_delta >= 0");
    }
    opts.early_stopping = stopping;
  } else if (!lua_isnil(L, -1) && !(lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
    throw core::ScriptError(path_ +
                            ": trainer early_stopping must be a table "
                            "{metric = 'validation.loss', patience = 3}");
  }
  lua_pop(L, 1);
}

// loss_scale = 'dynamic' | true | false |
//              {init_scale = 65536, growth_factor = 2, backoff_factor = 0.5, growth_interval =
//              2000}
void TrainScript::read_loss_scale(int t, train::LossScaling& scaling) const {
  lua_State* L = runtime_.state();
  raw_get(L, t, "loss_scale");
  const int type = lua_type(L, -1);
  if (type == LUA_TBOOLEAN) {
    scaling.enabled = lua_toboolean(L, -1) != 0;
  } else if (type == LUA_TSTRING && std::string(lua_tostring(L, -1)) == "dynamic") {
    scaling.enabled = true;
  } else if (type == LUA_TTABLE) {
    Options ls(L, lua_gettop(L), "trainer.loss_scale",
               {"init_scale", "growth_factor", "backoff_factor", "growth_interval"});
    scaling.enabled = true;
    scaling.init_scale = ls.number("init_scale", scaling.init_scale);
    scaling.growth_factor = ls.number("growth_factor", scaling.growth_factor);
    scaling.backoff_factor = ls.number("backoff_factor", scaling.backoff_factor);
    scaling.growth_interval = ls.integer("growth_interval", scaling.growth_interval);
    try {
      train::GradScaler(scaling.init_scale, scaling.growth_factor, scaling.backoff_factor,
                        scaling.growth_interval);
    } catch (const core::UsageError& e) {
      throw core::ScriptError(path_ + ": trainer " + e.what());
    }
  } else if (type != LUA_TNIL) {
    throw core::ScriptError(path_ +
                            ": trainer loss_scale must be 'dynamic', false, or a table "
                            "{init_scale = 65536, growth_interval = 2000}");
  }
  lua_pop(L, 1);
}

}  // namespace engine::lua
