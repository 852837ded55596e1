// A hyperparameter's value as a script declares it and run files and checkpoints store it: a
// number, a boolean or a string. Apart from run_writer.hpp so that a training spec can hold
// hyperparameters without seeing HDF5.
#pragma once

#include <string>
#include <variant>

namespace engine::io {

using HParam = std::variant<double, bool, std::string>;

}  // namespace engine::io
