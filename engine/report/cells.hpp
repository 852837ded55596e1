// The values result files hold, as table cells: hyperparameters and HDF5 attributes keep
// numbers as numbers (so that they sort, filter and right-align as numbers) and booleans
// as "true" / "false".
#pragma once

#include "engine/io/hdf5.hpp"
#include "engine/io/hparam.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

Cell cell_of(const io::HParam& value);
Cell cell_of(const io::h5::Attribute& value);

}  // namespace engine::report
