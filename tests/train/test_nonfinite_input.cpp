#include <doctest/doctest.h>

#include "engine/train/nonfinite_input.hpp"

using namespace engine;

TEST_CASE("a non-finite loss from the data: the first sample with a NaN or an infinity is named") {
  data::Batch batch;
  batch.input = torch::ones({3, 2});
  batch.target = torch::tensor({0, 1, 2}, torch::kInt64);
  batch.indices = torch::tensor({40, 7, 12}, torch::kInt64);
  CHECK(train::nonfinite_input_note(batch, "src") == "");

  batch.input[1][1] = std::numeric_limits<float>::quiet_NaN();
  batch.input[2][0] = std::numeric_limits<float>::infinity();
  CHECK(train::nonfinite_input_note(batch, "hdf5(f.h5)") ==
        "; sample 2 of the batch (row 7 of hdf5(f.h5)) holds nan in its input: the data, not the "
        "training, made the loss non-finite");

  // a named input, and a float target; without source indices the source alone is named
  data::Batch named;
  named.input = torch::ones({2, 2});
  named.inputs["text"] = torch::ones({2, 3});
  named.inputs["text"][1][2] = -std::numeric_limits<float>::infinity();
  CHECK(train::nonfinite_input_note(named, "tensors") ==
        "; sample 2 of the batch (from tensors) holds -inf in its input 'text': the data, not the "
        "training, made the loss non-finite");
  data::Batch target;
  target.input = torch::ones({2, 2});
  target.target = torch::tensor({1.0f, std::numeric_limits<float>::quiet_NaN()});
  CHECK(train::nonfinite_input_note(target, "csv").find("holds nan in its target") !=
        std::string::npos);
}
