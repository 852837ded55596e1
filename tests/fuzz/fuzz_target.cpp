#include "tests/fuzz/fuzz_target.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>

#include "engine/core/errors.hpp"

namespace engine::fuzz {
namespace {

std::map<std::string, Target>& registry() {
  static std::map<std::string, Target> targets;
  return targets;
}

std::string& input_name() {
  static std::string name = "(libFuzzer input)";
  return name;
}

[[noreturn]] void finding(const std::string& target, const std::string& what) {
  std::fprintf(stderr, "fuzz target %s: %s: %s\n", target.c_str(), input_name().c_str(),
               what.c_str());
  std::abort();
}

}  // namespace

Registration::Registration(const char* name, Target target) {
  registry()[name] = target;
}

const std::map<std::string, Target>& targets() {
  return registry();
}

void set_input_name(const std::string& name) {
  input_name() = name;
}

void run_one(const std::string& name, Target target, const uint8_t* data, size_t size) {
  try {
    target(data, size);
  } catch (const core::Error&) {
    // the answer a user gets for bad input: fine
  } catch (const std::exception& e) {
    finding(name, std::string("an exception that is not the engine's own: ") + e.what());
  } catch (...) {
    finding(name, "an exception of unknown type");
  }
}

const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* root = std::getenv("ENGINE_TEST_TMP");
    const auto path =
        std::filesystem::path(root ? root : "/tmp") / ("engine-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(path);
    return path.string();
  }();
  return dir;
}

void write_file(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
}

int64_t Bytes::in_range(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  uint64_t value = 0;
  for (uint64_t room = span - 1; room > 0; room >>= 8) value = (value << 8) | byte();
  return lo + static_cast<int64_t>(value % span);
}

std::string Bytes::text(size_t max_length) {
  const size_t wanted = byte();  // first: it shortens what is left
  const size_t length = std::min(wanted, std::min(max_length, size_));
  std::string out(reinterpret_cast<const char*>(data_), length);
  data_ += length;
  size_ -= length;
  return out;
}

std::vector<uint8_t> Bytes::raw(size_t count) {
  count = std::min(count, size_);
  std::vector<uint8_t> out(data_, data_ + count);
  data_ += count;
  size_ -= count;
  return out;
}

std::string Bytes::rest() {
  std::string out(reinterpret_cast<const char*>(data_), size_);
  data_ += size_;
  size_ = 0;
  return out;
}

}  // namespace engine::fuzz
