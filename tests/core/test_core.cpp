#include <doctest/doctest.h>

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <new>

#include "engine/core/activity.hpp"
#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/metric_names.hpp"
#include "engine/core/numbers.hpp"
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

TEST_CASE("counts: a product past 2^53 is refused, never wrapped around") {
  CHECK(count_product(3, 938) == 2814);
  CHECK(count_product(0, kMaxCount) == 0);
  CHECK(count_product(1, kMaxCount) == kMaxCount);
  CHECK_FALSE(count_product(2, kMaxCount));
  CHECK_FALSE(count_product(1000000000000000000, 938));  // wraps in int64_t
  CHECK_FALSE(count_product(-1, 5));
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

TEST_CASE("allocator: flags and names") {
  CHECK(parse_allocator("caching") == AllocatorPolicy::kCaching);
  CHECK(parse_allocator("system") == AllocatorPolicy::kSystem);
  CHECK_THROWS_WITH_AS(parse_allocator("jemalloc"), doctest::Contains("--allocator"), UsageError);
  CHECK(allocator_flag({"s.lua", "--allocator", "system"}) == "system");
  CHECK(allocator_flag({"--allocator=caching", "x"}) == "caching");
  CHECK(allocator_flag({"s.lua", "--threads", "2"}).empty());
  CHECK_THROWS_AS(allocator_flag({"--allocator"}), UsageError);
}

TEST_CASE("allocator: the engine's CPU allocator aligns, counts and frees tensor memory") {
  configure_allocator(AllocatorPolicy::kCaching);
  CHECK(allocator_in_use() == AllocatorPolicy::kCaching);
  const int64_t before = cpu_tensor_bytes();
  {
    auto t = torch::ones({1000, 1000});  // 4 MB
    CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
    CHECK(cpu_tensor_bytes() - before >= 4000000);
    CHECK(t.sum().item<double>() == 1000000);
    for (int64_t n : {1, 3, 17, 64, 1000, 100000}) {  // every size comes back 64-byte aligned
      auto s = torch::empty({n}, torch::kUInt8);
      CHECK(reinterpret_cast<uintptr_t>(s.data_ptr()) % 64 == 0);
    }
  }
  CHECK(cpu_tensor_bytes() - before < 4096);
  CHECK(resident_bytes() > 0);
  CHECK(peak_resident_bytes() >= resident_bytes());
}

TEST_CASE("names that become files or HDF5 datasets are checked as written") {
  for (const char* good : {"accuracy", "val-loss_2", "top5", "iou.mean", "mnist cnn"}) {
    CHECK_NOTHROW(check_path_name("metric", good));
  }
  for (const char* bad : {"", ".", "..", "a/b", "../x", "a\\b", "tab\there"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(check_path_name("metric", bad), UsageError);
  }
  CHECK_THROWS_WITH_AS(check_path_name("the script's name", "../x"),
                       "the script's name '../x' cannot name a file or an HDF5 dataset: it must "
                       "not be empty, '.' or '..', nor hold '/', '\\' or control characters",
                       UsageError);
}

TEST_CASE("out of memory is said with the activity it ran out in") {
  const auto run_out = [] {
    engine::core::Activity step("the forward pass and loss of step", 12);
    engine::core::Activity backward("the backward pass of step", 12);
    C10_THROW_ERROR(OutOfMemoryError, "CPU: not enough memory: you tried to allocate 64 bytes.");
  };
  try {
    run_out();
    FAIL("no exception");
  } catch (const std::exception& e) {
    CHECK(engine::core::describe_exception(e) ==
          "out of memory in the backward pass of step 12: CPU: not enough memory: you tried to "
          "allocate 64 bytes.");
  }
  try {
    engine::core::Activity reading("reading the training data for step", 3);
    throw std::bad_alloc();
  } catch (const std::exception& e) {
    CHECK(engine::core::describe_exception(e) ==
          "out of memory in reading the training data for step 3 (std::bad_alloc)");
  }
  {
    engine::core::Activity next("the validation after step",
                                20);  // a new activity: the last is done
  }
  CHECK(engine::core::Activity::failed_in().empty());
  try {
    throw std::bad_alloc();  // outside any activity
  } catch (const std::exception& e) {
    CHECK(engine::core::describe_exception(e) == "out of memory (std::bad_alloc)");
  }
  try {
    engine::core::Activity step("the forward pass and loss of step", 5);
    throw engine::core::OutOfMemory(
        "out of memory in layer '1' Linear(in_features=2, out_features=3)");
  } catch (const std::exception& e) {
    CHECK(engine::core::describe_exception(e) ==
          "out of memory in layer '1' Linear(in_features=2, out_features=3) (in the forward pass "
          "and loss of step 5)");
  }
}
