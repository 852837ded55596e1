// Where a non-finite loss came from, when it came with the data: the first sample of the batch
// whose input (or a named input, or a float target) holds a NaN or an infinity, named with the
// source it was read from, so that "the loss is nan" does not send the user to the learning
// rate when a data file holds the NaN.
#pragma once

#include <string>

#include "engine/data/batch.hpp"

namespace engine::train {

// "; sample 3 of the batch (sample 1234 of hdf5(...)) holds nan in its input: the data, not
// the training, made the loss non-finite", or "" when every value of the batch is finite.
std::string nonfinite_input_note(const data::Batch& batch, const std::string& source);

}  // namespace engine::train
