// Precompiled header for every engine target: libtorch's API is most of each TU's compile time.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
