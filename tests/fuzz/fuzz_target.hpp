// Fuzz targets (docs/reliability.md): functions of arbitrary bytes that must end normally or with
// one of the engine's own errors (core::Error). Anything else is a finding: a sanitizer report,
// a crash, or any other exception (a raw libtorch, HDF5 or standard-library message reaching the
// user, a std::bad_alloc from a size nobody checked).
//
// The same sources build two ways: with ENGINE_FUZZ (clang, libFuzzer) as one fuzzer per target,
// and in every build as `fuzz_replay`, which runs each target over its committed corpus in the
// test suite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace engine::fuzz {

using Target = void (*)(const uint8_t* data, size_t size);

struct Registration {
  Registration(const char* name, Target target);
};
const std::map<std::string, Target>& targets();

// Runs the target once: returns for a normal end or a core::Error; prints the input's name
// (set_input_name) and aborts on anything else, so libFuzzer records the input.
void run_one(const std::string& name, Target target, const uint8_t* data, size_t size);
void set_input_name(const std::string& name);

// A folder of this process's own, for the files a target writes (created on first use).
const std::string& scratch_dir();
void write_file(const std::string& path, const void* data, size_t size);

// Takes typed values from the front of the fuzz input; an exhausted input gives zeros.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return size_ ? (--size_, *data_++) : 0; }
  bool flag() { return byte() & 1; }
  // A value in [lo, hi].
  int64_t in_range(int64_t lo, int64_t hi);
  template <typename T>
  const T& pick(const std::vector<T>& options) {
    return options[static_cast<size_t>(in_range(0, static_cast<int64_t>(options.size()) - 1))];
  }
  std::string text(size_t max_length);  // a length byte, then that many bytes
  std::vector<uint8_t> raw(size_t count);
  std::string rest();  // everything left
  size_t left() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace engine::fuzz

#define ENGINE_FUZZ_TARGET(name)                                                                 \
  static void fuzz_target_##name(const uint8_t* data, size_t size);                              \
  static const ::engine::fuzz::Registration fuzz_registration_##name(#name, fuzz_target_##name); \
  static void fuzz_target_##name(const uint8_t* data, size_t size)
