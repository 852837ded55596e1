// The parts of a checkpoint that files of their own write and read (checkpoint.cpp assembles
// the file): the optimizers with their schedulers (checkpoint_optimizer.cpp).
#pragma once

#include <map>
#include <string>

#include "engine/io/hdf5.hpp"
#include "engine/train/spec.hpp"

namespace engine::train {

// /optimizer and /scheduler: the script's optimizer and scheduler, or, when it names several
// optimizers, one group per name under each (HDF5_SCHEMA.md, docs/run-files.md).
void write_optimizers(hid_t root, const TrainSpec& spec);
// Restores them into spec (built from the same script); a DataError names the checkpoint and
// what differs (another optimizer, other names, another scheduler).
void read_optimizers(hid_t root, const std::string& path, TrainSpec& spec);

// The number attributes of an HDF5 object, by name. (checkpoint.cpp)
std::map<std::string, double> read_double_attributes(hid_t object);

}  // namespace engine::train
