// Learning-rate schedulers bound to their optimizer, stepped per epoch or per step
// (Determined's step modes), with PyTorch's semantics: after k calls to step() a group's rate is
// what PyTorch's scheduler gives after k calls. Their state goes into checkpoints.
#pragma once

#include <torch/optim/optimizer.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace engine::train {

enum class StepMode { kEpoch, kStep };
StepMode parse_step_mode(const std::string& name);

class Scheduler {
 public:
  Scheduler(std::shared_ptr<torch::optim::Optimizer> optimizer, StepMode mode, std::string name);
  virtual ~Scheduler() = default;
  virtual void step() = 0;
  // ReduceLROnPlateau only: the metric it watches ("validation.loss"), empty for the others...
  virtual std::string watched_metric() const { return {}; }
  // ...and its value after each validation.
  virtual void observe(double /*metric*/) {}
  // Everything needed to continue the schedule after a restart (the optimizer's rates are
  // restored with the optimizer).
  virtual std::map<std::string, double> state() const = 0;
  virtual void load_state(const std::map<std::string, double>& state) = 0;

  StepMode mode() const { return mode_; }
  const std::string& name() const { return name_; }
  const std::shared_ptr<torch::optim::Optimizer>& optimizer() const { return optimizer_; }

 protected:
  std::shared_ptr<torch::optim::Optimizer> optimizer_;

 private:
  StepMode mode_;
  std::string name_;
};

// A schedule in closed form: each group's rate after t steps is rate(base, t), base being its
// rate when the scheduler was made. Set at construction for t = 0, as PyTorch does.
using Rate = std::function<double(double base, int64_t t)>;

class ClosedFormLR : public Scheduler {
 public:
  ClosedFormLR(std::shared_ptr<torch::optim::Optimizer> optimizer, Rate rate, StepMode mode,
               std::string name);
  void step() override;
  std::map<std::string, double> state() const override { return {{"steps", double(t_)}}; }
  void load_state(const std::map<std::string, double>& state) override;
  const Rate& rate() const { return rate_; }
  int64_t steps() const { return t_; }

 private:
  void apply();
  std::vector<double> base_;
  Rate rate_;
  int64_t t_ = 0;
};

// PyTorch's closed forms.
Rate step_rate(int64_t step_size, double gamma);
Rate exponential_rate(double gamma);
Rate multi_step_rate(std::vector<int64_t> milestones, double gamma);
Rate cosine_annealing_rate(int64_t t_max, double eta_min);
Rate linear_rate(double start_factor, double end_factor, int64_t total_iters);

// The learning rate of the optimizer's first parameter group.
double current_lr(const torch::optim::Optimizer& optimizer);

}  // namespace engine::train
