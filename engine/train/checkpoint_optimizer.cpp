#include <torch/serialize/archive.h>

#include <algorithm>
#include <sstream>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/io/tensor_archive.hpp"
#include "engine/train/checkpoint_parts.hpp"
#include "engine/train/optimizer_archive.hpp"
#include "engine/train/optimizer_state_key.hpp"

namespace engine::train {
namespace {

namespace h5 = io::h5;

// A readable copy of one parameter's optimizer state (momentum buffers, moments, step counts).
void write_param_state(hid_t parent, const std::string& name,
                       const torch::optim::OptimizerParamState& state) {
  torch::serialize::OutputArchive out;
  state.serialize(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  const std::string data = bytes.str();
  torch::serialize::InputArchive in;
  in.load_from(data.data(), data.size());
  auto group = h5::create_group(parent, name);
  for (const auto& key : in.keys()) {
    c10::IValue value;
    if (!in.try_read(key, value)) continue;
    if (value.isTensor()) {
      io::write_tensor(group.get(), key, value.toTensor());
    } else if (value.isInt()) {
      h5::write_attribute(group.get(), key, static_cast<int64_t>(value.toInt()));
    } else if (value.isDouble()) {
      h5::write_attribute(group.get(), key, value.toDouble());
    }
  }
}

// One optimizer into `group`: its type, libtorch's archive of it, and a readable copy (each
// group's rate, each parameter's state under its model name).
void write_optimizer(hid_t group, torch::optim::Optimizer& optimizer, const std::string& type,
                     torch::nn::Module& model) {
  h5::write_attribute(group, "type", type);
  io::write_tensor(group, "archive", optimizer_archive(optimizer));
  std::map<const void*, std::string> names;
  for (const auto& p : model.named_parameters(true)) {
    names.emplace(p.value().unsafeGetTensorImpl(), p.key());  // a tied weight: its first name
  }
  auto groups = h5::create_group(group, "groups");
  auto states = h5::create_group(group, "state");
  const auto& state = optimizer.state();
  int index = 0;
  for (const auto& g : optimizer.param_groups()) {
    auto gg = h5::create_group(groups.get(), std::to_string(index++));
    h5::write_attribute(gg.get(), "lr", g.options().get_lr());
    h5::write_attribute(gg.get(), "parameters", static_cast<int64_t>(g.params().size()));
    for (const auto& p : g.params()) {
      auto it = state.find(optimizer_state_key(p));
      auto name = names.find(p.unsafeGetTensorImpl());
      if (it == state.end() || name == names.end()) continue;
      write_param_state(states.get(), name->second, *it->second);
    }
  }
}

void read_optimizer(hid_t group, const std::string& where, torch::optim::Optimizer& optimizer,
                    const std::string& type) {
  const auto saved_type = h5::read_string_attribute(group, "type");
  if (saved_type != type) {
    throw core::DataError(where + " is " + saved_type + ", the script's is " + type);
  }
  load_optimizer_archive(optimizer, io::read_tensor(group, "archive"));
  // libtorch 1.13's load restores the state but leaves the groups' options as they were built:
  // the rates (which schedules change) come from the readable copy
  auto groups = h5::open_group(group, "groups");
  auto& param_groups = optimizer.param_groups();
  for (size_t g = 0; g < param_groups.size(); ++g) {
    const std::string name = std::to_string(g);
    if (!h5::exists(groups.get(), name)) {
      throw core::DataError(where + ": its groups/" + name +
                            " is missing; the script's optimizer has more parameter groups");
    }
    auto gg = h5::open_group(groups.get(), name);
    param_groups[g].options().set_lr(h5::read_double_attribute(gg.get(), "lr"));
  }
}

void write_scheduler(hid_t group, const Scheduler* scheduler) {
  if (!scheduler) return;
  h5::write_attribute(group, "name", scheduler->name());
  for (const auto& [k, v] : scheduler->state()) h5::write_attribute(group, k, v);
}

void read_scheduler(hid_t group, const std::string& where, Scheduler* scheduler) {
  const bool saved = h5::has_attribute(group, "name");
  const std::string saved_name = saved ? h5::read_string_attribute(group, "name") : "none";
  if (saved != (scheduler != nullptr) || (scheduler && saved_name != scheduler->name())) {
    throw core::DataError(where + " (" + saved_name + ") is not the script's (" +
                          (scheduler ? scheduler->name() : "none") + ")");
  }
  if (scheduler) scheduler->load_state(read_double_attributes(group));
}

std::string optimizer_names(const TrainSpec& spec) {
  std::vector<std::string> names;
  for (const auto& o : spec.optimizers) names.push_back(o.name);
  return core::join(names, "\n");
}

}  // namespace

void write_optimizers(hid_t root, const TrainSpec& spec) {
  auto optimizers = h5::create_group(root, "optimizer");
  auto schedulers = h5::create_group(root, "scheduler");
  if (spec.optimizers.empty()) {
    write_optimizer(optimizers.get(), *spec.optimizer, spec.optimizer_name, *spec.model.module);
    write_scheduler(schedulers.get(), spec.scheduler.get());
    return;
  }
  h5::write_attribute(optimizers.get(), "names", optimizer_names(spec));
  for (const auto& named : spec.optimizers) {
    auto group = h5::create_group(optimizers.get(), named.name);
    write_optimizer(group.get(), *named.optimizer, named.type, *spec.model.module);
    auto scheduler = h5::create_group(schedulers.get(), named.name);
    write_scheduler(scheduler.get(), named.scheduler.get());
  }
}

void read_optimizers(hid_t root, const std::string& path, TrainSpec& spec) {
  if (!h5::exists(root, "optimizer")) throw core::DataError(path + ": no /optimizer group");
  auto optimizers = h5::open_group(root, "optimizer");
  auto schedulers = h5::open_group(root, "scheduler");
  const bool several = h5::has_attribute(optimizers.get(), "names");
  const std::string saved = several ? h5::read_string_attribute(optimizers.get(), "names") : "";
  const std::string wanted = optimizer_names(spec);
  if (several != !spec.optimizers.empty() || saved != wanted) {
    auto listed = [](const std::string& names) {
      std::string out = names;
      std::replace(out.begin(), out.end(), '\n', ',');
      return out.empty() ? std::string("one optimizer") : "optimizers " + out;
    };
    throw core::DataError(path + ": the checkpoint holds " + listed(saved) + ", the script has " +
                          listed(wanted));
  }
  if (!several) {
    read_optimizer(optimizers.get(), path + ": the checkpoint's optimizer", *spec.optimizer,
                   spec.optimizer_name);
    read_scheduler(schedulers.get(), path + ": the checkpoint's scheduler", spec.scheduler.get());
    return;
  }
  for (auto& named : spec.optimizers) {
    auto group = h5::open_group(optimizers.get(), named.name);
    read_optimizer(group.get(), path + ": the checkpoint's optimizer '" + named.name + "'",
                   *named.optimizer, named.type);
    if (!h5::exists(schedulers.get(), named.name)) {
      throw core::DataError(path + ": /scheduler/" + named.name + " is missing");
    }
    auto scheduler = h5::open_group(schedulers.get(), named.name);
    read_scheduler(scheduler.get(), path + ": the checkpoint's scheduler of '" + named.name + "'",
                   named.scheduler.get());
  }
}

}  // namespace engine::train
