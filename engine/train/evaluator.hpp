// A model run over data in evaluation mode: the model's eval(), torch::InferenceMode and the
// run's precision; the built-in forward (and loss, for labelled batches) or the script's
// evaluate_batch hook; metrics averaged per sample. The trainer's validation, engine eval,
// engine predict and engine bench --phase inference all go through it.
#pragma once

#include <c10/core/InferenceMode.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "engine/train/metrics.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/spec.hpp"
#include "engine/train/step_context.hpp"
#include "engine/train/target_check.hpp"

namespace engine::train {

class Evaluator : public StepContext {
 public:
  // parent: the running context an evaluate_batch hook's ctx:stop(), ctx.epoch and
  // ctx.step_index refer to (the trainer, during validation); none for a standalone pass,
  // which reports the position set_position() gives it.
  explicit Evaluator(TrainSpec& spec, StepContext* parent = nullptr);

  // Evaluation mode while it lives: the model in eval(), no autograd (InferenceMode); the
  // model's former mode back when it ends, however it ends.
  class Mode {
   public:
    explicit Mode(TrainSpec& spec);
    ~Mode();
    Mode(const Mode&) = delete;
    Mode& operator=(const Mode&) = delete;

   private:
    torch::nn::Module& module_;
    bool was_training_;
    c10::InferenceMode inference_;
  };

  // The whole pipeline once, in a Mode; hands each batch's output to on_batch when given;
  // returns the metrics of the labelled batches (with skipped_records when records were left
  // out).
  using BatchOutputs = std::function<void(const data::Batch&, const torch::Tensor& output)>;
  std::map<std::string, double> run(const data::Pipeline& pipeline,
                                    const BatchOutputs& on_batch = nullptr);
  // One batch, inside a Mode, under the run's autocast: the hook's result, or the model's
  // output and, when the batch is labelled and the spec has a loss, its loss. Values the hook
  // logged are among the values.
  BatchResult evaluate_batch(const data::Batch& batch);

  // Called on run()'s metrics before they are averaged: a distributed run sums them over its
  // ranks there (each rank evaluates its share), with the records its reader skipped as bad.
  void combine_with(std::function<void(MetricAccumulator&, int64_t& skipped)> combine) {
    combine_ = std::move(combine);
  }

  void set_position(int64_t epoch, int64_t step) {
    epoch_ = epoch;
    step_ = step;
  }

  // StepContext: evaluation neither backpropagates nor steps.
  TrainSpec& spec() override { return spec_; }
  bool backward(const torch::Tensor& loss) override;
  bool step() override;
  bool step(const std::string& optimizer) override;
  void log(const std::map<std::string, double>& values) override;
  void stop(const std::string& reason) override;
  int64_t epoch() const override { return parent_ ? parent_->epoch() : epoch_; }
  int64_t step_index() const override { return parent_ ? parent_->step_index() : step_; }
  bool training() const override { return false; }

 private:
  TrainSpec& spec_;
  StepContext* parent_;
  int64_t epoch_ = 1, step_ = 0;
  // check_targets: the pipeline's class check during run(); none: every batch's targets are read
  // pending_loss: where the built-in loss is left on the device instead of being read into
  // the result's values (nullptr: read it).
  BatchResult evaluate_batch(const data::Batch& batch, TargetCheck* check_targets,
                             torch::Tensor* pending_loss);

  std::map<std::string, double> logged_;  // ctx:log values of the current batch
  std::function<void(MetricAccumulator&, int64_t& skipped)> combine_;
};

}  // namespace engine::train
