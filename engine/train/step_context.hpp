// What train_batch / evaluate_batch hooks and callbacks see of the running trainer: Determined's
// context. The trainer implements it; the Lua layer exposes it as `ctx`.
#pragma once

#include <torch/types.h>

#include <map>
#include <string>

#include "engine/train/spec.hpp"

namespace engine::train {

class StepContext {
 public:
  virtual ~StepContext() = default;
  virtual TrainSpec& spec() = 0;
  // Backpropagates one batch's loss, divided by `accumulate` and scaled for float16. A NaN or
  // infinite loss stops the run with a TrainingError naming the step, or, with on_nan = 'skip',
  // leaves the batch out. Returns whether it backpropagated.
  virtual bool backward(const torch::Tensor& loss) = 0;
  // Closes the batch's part of an optimizer step: on the last batch of an accumulation group it
  // clips the gradients, steps the optimizer (and a per-step scheduler) and zeroes the
  // gradients. Returns whether the optimizer stepped.
  virtual bool step() = 0;
  // With several optimizers (TrainSpec::optimizers): steps the one of that name the same way
  // (clipping its parameters, its per-step scheduler, its gradients released). Each may step
  // once per batch; one not stepped in a batch keeps its parameters as they are.
  virtual bool step(const std::string& optimizer) = 0;
  // Extra values for this batch's metric row, averaged like the built-in ones.
  virtual void log(const std::map<std::string, double>& values) = 0;
  // Ends the run after this step (or this validation), recording the reason.
  virtual void stop(const std::string& reason) = 0;
  virtual int64_t epoch() const = 0;       // 1-based epoch in progress
  virtual int64_t step_index() const = 0;  // optimizer steps taken so far
  virtual bool training() const = 0;       // false inside evaluate_batch
};

}  // namespace engine::train
