// A point's parameters (bench/parameters.hpp) as the options run_point takes: the one reading of
// them, whether they came from `engine bench` flags, a sweep run in this process, or a sweep's
// child process.
#pragma once

#include <string>
#include <vector>

#include "engine/bench/point.hpp"
#include "engine/bench/value.hpp"
#include "engine/core/device_settings.hpp"

namespace engine::bench {

// The options the point's parameters give; a parameter the point does not set takes its
// default. A value that would change the run and cannot be honoured is a UsageError naming the
// flag (--dtype, --memory_format, --input_shape, ...). input_shape and classes stay empty and 0
// unless the point sets them: the model's own fill them in. The model itself, the profile path
// and the group are the caller's.
PointOptions point_options(const Point& point);

// The point's device (DLBS's gpu is cuda), read without touching it; a UsageError names
// --device.
torch::Device point_device(const Point& point);

// The GPU backends' settings the point asks for (cudnn_benchmark, tf32), for
// core::apply_device_settings.
core::DeviceSettings point_device_settings(const Point& point);

// The parameters the point sets that cannot apply to it, each with the reason, in the order of
// point_parameters(): "cudnn_benchmark (no cuDNN on cpu)". DLBS's settings are recorded, not
// refused.
std::vector<std::string> not_applicable(const Point& point, const PointOptions& options);

}  // namespace engine::bench
