// "Did you mean": the names offered for one that is not known.
#include <doctest/doctest.h>

#include "engine/core/nearest_names.hpp"

using engine::core::nearest_names;

TEST_CASE("nearest names: typos, case, swapped letters, and names that hold the letters") {
  const std::vector<std::string> nn = {"Linear",  "LayerNorm", "LSTM",  "BCEWithLogitsLoss",
                                       "MSELoss", "ReLU",      "Conv2d"};
  CHECK(nearest_names("Linaer", nn) == std::vector<std::string>{"Linear"});
  CHECK(nearest_names("linear", nn) == std::vector<std::string>{"Linear"});
  CHECK(nearest_names("relu", nn) == std::vector<std::string>{"ReLU"});
  const auto bce = nearest_names("BCELoss", nn);
  CHECK(std::find(bce.begin(), bce.end(), "BCEWithLogitsLoss") != bce.end());
  CHECK(nearest_names("Conv2D", nn) == std::vector<std::string>{"Conv2d"});
  CHECK(nearest_names("Transformer", nn).empty());
  CHECK(nearest_names("Linear", nn).empty());  // the name itself is not offered
}

TEST_CASE("nearest names: at most the limit, nearest first") {
  const std::vector<std::string> names = {"review", "views", "view", "viewing"};
  CHECK(nearest_names("viw", names, 2) == std::vector<std::string>{"view", "views"});
  CHECK(nearest_names("viw", names, 1) == std::vector<std::string>{"view"});
}
