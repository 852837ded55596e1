// Reads a training script (the table it returns) into a train::TrainSpec: runs the script,
// applies --set overrides to its hparams, then calls its model, data, loss, optimizer,
// scheduler and trainer functions in that order.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/errors.hpp"
#include "engine/io/hparam.hpp"
#include "engine/search/searcher.hpp"
#include "engine/search/space.hpp"
#include "engine/train/spec.hpp"

namespace engine::lua {

class Runtime;
class LuaHooks;

class TrainScript {
 public:
  // Runs the script; it must return a table. Throws ScriptError otherwise.
  TrainScript(Runtime& runtime, std::string path);
  ~TrainScript();
  TrainScript(const TrainScript&) = delete;
  TrainScript& operator=(const TrainScript&) = delete;

  std::string name() const;         // the script's `name`, or its file name without .lua
  std::string description() const;  // the script's `description`, or ""
  std::optional<uint64_t> seed() const;
  // "key=value" pairs (--set); the key must exist in hparams and the value must fit its type.
  // A key with dots names an entry of nested tables (--set optimizer.lr=0.1).
  void apply_overrides(const std::vector<std::string>& assignments);
  // Typed values (a checkpoint's hyperparameters); each must exist in hparams with the same
  // type. origin names where they come from in every error ("--resume runs/a.h5"); written_by
  // is the name of the script that wrote them. Values this script cannot take are a DataError
  // that says the checkpoint is another script's and lists them.
  void set_hparams(const std::map<std::string, io::HParam>& values, const std::string& origin,
                   const std::string& written_by);
  std::map<std::string, io::HParam> hparams() const;
  // The hyperparameters split into search spaces (require 'search') and constants
  // (search_reader.cpp). build() refuses a script that still has spaces: --set gives them values.
  search::SearchSpace search_space() const;
  // The script's `searcher` table (Determined's fields; max_length as a number with `unit`, or
  // as {epochs = n} or {steps = n}); nullopt when the script has none. ScriptError for a bad one.
  std::optional<search::SearcherConfig> searcher() const;
  const std::string& path() const { return path_; }
  // The metric names the run logs in each split, read from the script without building it:
  // loss and the `metrics` table's names; nullopt when a train_batch or evaluate_batch hook
  // may log others of its own.
  std::optional<std::vector<std::string>> logged_metrics() const;
  // The length the run is planned for when the command gives one (--epochs / --steps, or
  // --budget when those train a stage of it: a search trial's rung): the script reads it as
  // hp.budget = {epochs = n} or {steps = n}, so that a schedule fits the whole run. `stage`:
  // the stage's own length, read as hp.rung = {epochs = n} or {steps = n} (nil when the run is
  // not a stage). Neither is a hyperparameter: not recorded, not overridable.
  void set_budget(const std::string& unit, int64_t length,
                  std::optional<int64_t> stage = std::nullopt);
  // Builds the run; the model is moved to `device` before the optimizer sees its parameters.
  train::TrainSpec build(torch::Device device, uint64_t seed);

 private:
  train::TrainSpec build_spec(torch::Device device, uint64_t seed);
  // The parts of build_spec, in the order they run: each calls its field of the script with
  // the hyperparameters and checks what comes back (read_optimizer leaves the optimizer on the
  // stack for read_scheduler).
  void read_model(torch::Device device, train::TrainSpec& spec);
  void read_data(train::TrainSpec& spec);
  void read_class_names(train::TrainSpec& spec);
  void read_loss(train::TrainSpec& spec);
  void read_optimizer(train::TrainSpec& spec);  // optimizer_reader.cpp, with the next three
  void read_named_optimizers(int table, train::TrainSpec& spec);
  void read_named_schedulers(int table, train::TrainSpec& spec);
  void read_metrics(train::TrainSpec& spec);
  void read_scheduler(train::TrainSpec& spec);
  void read_script_state(train::TrainSpec& spec);  // script_state.cpp
  void push_field(const char* key) const;          // pushes spec[key]
  void push_hparams() const;
  // Calls visit(name) for every hyperparameter, with its value on top of the stack; nested
  // tables' entries are named with dots (optimizer.lr).
  void for_each_hparam(const std::function<void(const std::string& name)>& visit) const;
  std::string push_holder(const std::string& key) const;
  int hparam_type(const std::string& key, const std::string& who) const;  // a LUA_T* number
  void assign_hparam(const std::string& key, const io::HParam& value);
  // Pushes spec[key](args...) or spec[key] itself when it is not a function; the nargs
  // arguments are on the stack already.
  void call_field(const char* key, int nargs) const;
  // The trainer table (trainer_options_reader.cpp).
  void read_trainer_options(int table, train::TrainerOptions& options) const;
  void read_every(int table, train::TrainerOptions& options) const;  // validate_, checkpoint_every
  void read_early_stopping(int table, train::TrainerOptions& options) const;
  // A ScriptError with file:line for a key of data()'s table the trainer does not read.
  void check_data_keys(int table) const;
  std::string data_key_location(const std::string& key) const;
  // Throws `error` again with the script's path in front and the line of the trainer option it
  // names at its end ("... (cnn.lua:14)"), as the same type.
  [[noreturn]] void throw_with_trainer_line(const core::Error& error) const;
  void read_loss_scale(int table, train::LossScaling& scaling) const;

  Runtime& runtime_;
  std::string path_;
  int spec_ref_;
  int hparams_ref_;
  std::unique_ptr<LuaHooks> hooks_;  // the hooks' Lua values; lives as long as the spec runs
};

// The line where `key = ` is first written after `field =` (spec.field = too) in a script's
// text; 0 when it cannot be found (trainer_options_reader.cpp).
int64_t field_key_line(const std::string& text, const std::string& field, const std::string& key);

}  // namespace engine::lua
