// A series as one line of block characters ("▁▂▄▆█"), the shape of a training curve in a
// terminal: Torch7's gnuplot and TensorBoard's scalars, in 24 characters.
#pragma once

#include <string>
#include <vector>

namespace engine::report {

// The values resampled to at most `width` buckets (each the mean of its finite values) and
// scaled from their minimum to their maximum; a bucket with no finite value is a space.
std::string sparkline(const std::vector<double>& values, size_t width = 24);

}  // namespace engine::report
