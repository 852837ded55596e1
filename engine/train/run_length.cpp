#include "engine/train/run_length.hpp"

#include <string>

#include "engine/core/errors.hpp"
#include "engine/core/numbers.hpp"

namespace engine::train {

int64_t planned_steps(const TrainSpec& spec) {
  const auto& o = spec.options;
  if (o.steps > 0) return o.steps;
  const int64_t k = o.accumulate;
  const int64_t steps_per_epoch = (spec.train_data->size() + k - 1) / k;
  const auto steps = core::count_product(o.epochs, steps_per_epoch);
  if (!steps) {
    throw core::UsageError("trainer epochs " + std::to_string(o.epochs) + " of " +
                           std::to_string(steps_per_epoch) +
                           " steps each: more than 2^53 steps, the most a run counts; give "
                           "fewer epochs, or a number of steps");
  }
  return *steps;
}

}  // namespace engine::train
