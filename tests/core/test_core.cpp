#include <doctest/doctest.h>

#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/seed.hpp"
#include "engine/core/sha256.hpp"
#include "engine/core/threads.hpp"

using namespace engine::core;

TEST_CASE("devices and dtypes parse from their user-facing names") {
  CHECK((parse_device("cpu") == torch::Device(torch::kCPU)));
  CHECK_THROWS_AS(parse_device("gpu"), UsageError);
  CHECK_THROWS_AS(parse_device("cuda:x"), UsageError);
  CHECK((parse_dtype("float32") == torch::kFloat32));
  CHECK((parse_dtype("int64") == torch::kInt64));
  CHECK(dtype_name(torch::kBFloat16) == "bfloat16");
  try {
    parse_dtype("float8");
    FAIL("expected a UsageError");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("float8") != std::string::npos);
    CHECK(std::string(e.what()).find("float32") != std::string::npos);  // lists the known ones
  }
}

TEST_CASE("errors carry their exit codes") {
  CHECK(UsageError("x").exit_code() == 2);
  CHECK(ScriptError("x").exit_code() == 3);
  CHECK(DataError("x").exit_code() == 4);
  CHECK(IoError("x").exit_code() == 5);
}

TEST_CASE("derived seeds differ per stream and index, and repeat for equal inputs") {
  CHECK(derive_seed(1, 2, 3) == derive_seed(1, 2, 3));
  CHECK(derive_seed(1, 2, 3) != derive_seed(1, 2, 4));
  CHECK(derive_seed(1, 2, 3) != derive_seed(1, 3, 3));
  CHECK(derive_seed(1, 2, 3) != derive_seed(2, 2, 3));
}

TEST_CASE("formatting helpers") {
  CHECK(shape_string({64, 1, 28, 28}) == "[64, 1, 28, 28]");
  CHECK(shape_string({}) == "[]");
  CHECK(duration_string(5.25) == "5.2s");
  CHECK(duration_string(83) == "1m23s");
  CHECK(duration_string(7200) == "2h00m");
  CHECK(join({"a", "b", "c"}) == "a, b, c");
}

TEST_CASE("sha256 matches the FIPS 180-2 test vector") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("threads are set explicitly") {
  CHECK(configure_threads(1) == 1);
  CHECK(at::get_num_threads() == 1);
  CHECK(configure_threads(0) == available_cores());
  CHECK_THROWS_AS(configure_threads(-1), UsageError);
}
