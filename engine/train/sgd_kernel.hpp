// FusedSGD's loop over one float32 parameter (engine/train/sgd.cpp), on libtorch's threads.
//
// A file of its own because at::parallel_for runs on libtorch's OpenMP threads only in code
// compiled with OpenMP (libtorch's own choice, AT_PARALLEL_OPENMP): this file gets the flag and
// skips the shared precompiled header (built without it), and it includes only ATen/Parallel.h
// and ATen/TensorIterator.h, so that it compiles in about 2 s instead of the 12 to 15 s of a
// file that parses torch::optim without the header.
#pragma once

#include <cstdint>

namespace engine::train {

// Scalars as libtorch's float kernels see them: converted to float once.
struct SgdCoefficients {
  float weight_decay, momentum, gradient_scale, minus_lr;
  bool nesterov, first_step;
};

// p, g and buf (null without momentum) hold n floats; updates p (and buf) in place with
// torch::optim::SGD::step's arithmetic, bit for bit.
void sgd_update(float* p, const float* g, float* buf, int64_t n, const SgdCoefficients& c);

}  // namespace engine::train
