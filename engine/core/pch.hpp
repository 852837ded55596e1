// Precompiled header for every engine target: libtorch's tensor API, which nearly every TU uses.
// Only torch/types.h (ATen, autograd's variables and factories), not torch/torch.h: a TU pays for
// loading what the header holds even when it uses none of it (an empty TU, 2 cores: 2.2 s with
// this header, 8.7 s with torch/torch.h), and most of the engine never touches torch::nn,
// torch::optim or torch::data. Files that do include the headers they use (docs/architecture.md,
// "Building").
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
