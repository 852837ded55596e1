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
  // With the groups' base rates given (SequentialLR: its first scheduler's).
  ClosedFormLR(std::shared_ptr<torch::optim::Optimizer> optimizer, Rate rate, StepMode mode,
               std::string name, std::vector<double> bases);
  const std::vector<double>& bases() const { return base_; }
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

// LambdaLR: base * factor(t), the factor computed once per t whatever the number of groups.
Rate lambda_rate(std::function<double(int64_t t)> factor);
// SequentialLR: rates[i] from milestones[i-1] on, restarted at 0 there (as PyTorch's step(0)).
Rate sequential_rate(std::vector<Rate> rates, std::vector<int64_t> milestones);

// OneCycleLR (Smith 2018), PyTorch's semantics: from max_lr / div_factor up to max_lr over
// pct_start of total_steps, then down to initial / final_div_factor (or three phases);
// momentum (SGD, RMSprop) or beta1 (Adam, AdamW) cycles the other way.
struct OneCycleOptions {
  double max_lr = 0;
  int64_t total_steps = 0;
  double pct_start = 0.3;
  bool cosine = true;  // anneal_strategy 'cos'; false: 'linear'
  bool cycle_momentum = true;
  double base_momentum = 0.85, max_momentum = 0.95;
  double div_factor = 25, final_div_factor = 1e4;
  bool three_phase = false;
};

class OneCycleLR : public Scheduler {
 public:
  OneCycleLR(std::shared_ptr<torch::optim::Optimizer> optimizer, OneCycleOptions options,
             StepMode mode);
  void step() override;
  std::map<std::string, double> state() const override { return {{"steps", double(t_)}}; }
  void load_state(const std::map<std::string, double>& state) override;

 private:
  struct Phase {
    double end_step, start_lr, end_lr, start_momentum, end_momentum;
  };
  void apply();
  OneCycleOptions options_;
  std::vector<Phase> phases_;
  int64_t t_ = 0;
};

// ReduceLROnPlateau, PyTorch's semantics: after `patience` validations without an improvement
// of the watched metric (relative or absolute threshold), rates are multiplied by factor (not
// below min_lr), then `cooldown` validations pass before counting again.
struct PlateauOptions {
  std::string metric = "validation.loss";
  bool maximize = false;
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  bool relative = true;  // threshold_mode 'rel'; false: 'abs'
  int64_t cooldown = 0;
  double min_lr = 0;
  double eps = 1e-8;
};

class ReduceLROnPlateau : public Scheduler {
 public:
  ReduceLROnPlateau(std::shared_ptr<torch::optim::Optimizer> optimizer, PlateauOptions options);
  void step() override;  // throws: it needs a metric
  std::string watched_metric() const override { return options_.metric; }
  void observe(double metric) override;
  std::map<std::string, double> state() const override;
  void load_state(const std::map<std::string, double>& state) override;

 private:
  bool better(double value) const;
  PlateauOptions options_;
  double best_;
  int64_t bad_ = 0, cooldown_left_ = 0, steps_ = 0;
};

// Sets the momentum of a group (SGD, RMSprop) or beta1 (Adam, AdamW); false when it has none.
bool set_momentum(torch::optim::OptimizerOptions& options, double momentum);
// The momentum (or beta1) of a group; NaN when it has none.
double momentum_of(const torch::optim::OptimizerOptions& options);

// The learning rate of the optimizer's first parameter group.
double current_lr(const torch::optim::Optimizer& optimizer);

}  // namespace engine::train
