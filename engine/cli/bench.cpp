// engine bench --model ID ...: times one benchmark point from DLBS-style flags (one model, one
// batch size, one phase) on synthetic data held in memory, and prints its statistics.
#include <cstdio>
#include <set>
#include <sstream>

#include "engine/bench/point.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/seed.hpp"
#include "engine/core/threads.hpp"
#include "engine/lua/bench_model.hpp"

namespace engine::cli {
namespace {

// DLBS writes booleans as values (--forward_only false); a bare flag means true.
bool flag_bool(const cxxopts::ParseResult& flags, const char* name) {
  if (!flags.count(name)) return false;
  const auto v = flags[name].as<std::string>();
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  throw core::UsageError(std::string("--") + name + " takes true or false, got '" + v + "'");
}

// DLBS writes "--forward_only false" as two words; cxxopts takes an implicit value only as
// "--forward_only=false", so the two words are joined first.
std::vector<std::string> with_bool_values(std::vector<std::string> args, const std::string& flag) {
  static const std::set<std::string> words = {"true", "false", "1", "0", "yes", "no", "on", "off"};
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag && words.count(args[i + 1])) {
      args[i] += "=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  }
  return args;
}

// DLBS's device and dtype names as well as the engine's.
torch::Device bench_device(const std::string& name) {
  return core::parse_device(name == "gpu" ? "cuda" : name);
}

train::Precision bench_precision(const std::string& name) {
  if (name == "float" || name == "float32") return train::Precision::kFloat32;
  if (name == "bfloat16") return train::Precision::kBFloat16;
  if (name == "float16" || name == "half") return train::Precision::kFloat16;
  throw core::UsageError("--dtype must be float32 (float), bfloat16 or float16, got '" + name +
                         "'");
}

std::vector<int64_t> shape_flag(const std::string& text) {
  std::vector<int64_t> shape;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    try {
      size_t used = 0;
      shape.push_back(std::stoll(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw core::UsageError("--input_shape takes sizes separated by commas (1,28,28), got '" +
                             text + "'");
    }
  }
  return shape;
}

void print_json(const std::string& model, const bench::PointOptions& o, int threads,
                const bench::PointResult& r) {
  const auto& s = r.summary;
  std::printf(
      "{\"impl\": \"engine\", \"model\": \"%s\", \"phase\": \"%s\", \"batch_size\": %lld, "
      "\"threads\": %d, \"device\": \"%s\", \"dtype\": \"%s\", \"batches\": %lld, "
      "\"mean_ms\": %.4f, \"std_ms\": %.4f, \"p50_ms\": %.4f, \"p90_ms\": %.4f, "
      "\"p99_ms\": %.4f, \"min_ms\": %.4f, \"throughput\": %.2f, \"throughput_p50\": %.2f, "
      "\"peak_resident_bytes\": %lld}\n",
      model.c_str(), bench::phase_name(o.phase), static_cast<long long>(o.batch_size), threads,
      o.device.str().c_str(), train::precision_name(o.precision).c_str(),
      static_cast<long long>(s.batches), s.mean_ms, s.std_ms, s.p50_ms, s.p90_ms, s.p99_ms,
      s.min_ms, s.throughput, s.throughput_p50, static_cast<long long>(r.peak_resident_bytes));
}

void print_text(const std::string& model, const bench::PointOptions& o, int threads,
                const bench::PointResult& r) {
  const auto& s = r.summary;
  std::printf("%s, %s, batch %lld, %s, %s, %d thread%s%s\n", model.c_str(),
              bench::phase_name(o.phase), static_cast<long long>(o.batch_size),
              train::precision_name(o.precision).c_str(), o.device.str().c_str(), threads,
              threads == 1 ? "" : "s", r.loss.empty() ? "" : (", " + r.loss).c_str());
  std::printf(
      "  %lld timed batches: mean %.3f ms (std %.3f), p50 %.3f, p90 %.3f, p99 %.3f, "
      "min %.3f\n",
      static_cast<long long>(s.batches), s.mean_ms, s.std_ms, s.p50_ms, s.p90_ms, s.p99_ms,
      s.min_ms);
  std::printf("  %.1f samples/s (from the mean), %.1f (from p50); peak memory %.0f MiB\n",
              s.throughput, s.throughput_p50,
              static_cast<double>(r.peak_resident_bytes) / (1 << 20));
}

}  // namespace

int bench_command(const std::vector<std::string>& args) {
  cxxopts::Options options("engine bench",
                           "Time one benchmark point: a model's training step or forward pass on "
                           "a synthetic batch in memory (DLBS's flag names).");
  options.add_options()("model", "a zoo id (engine models) or the path of a Lua module file",
                        cxxopts::value<std::string>())(
      "batch_size", "samples per batch", cxxopts::value<int64_t>()->default_value("16"))(
      "num_batches", "timed batches", cxxopts::value<int64_t>()->default_value("20"))(
      "num_warmup_batches", "batches run first and not timed",
      cxxopts::value<int64_t>()->default_value("3"))(
      "phase", "training or inference", cxxopts::value<std::string>()->default_value("training"))(
      "forward_only", "the inference phase (DLBS; takes true or false)",
      cxxopts::value<std::string>()->implicit_value("true"))(
      "device", "cpu, cuda, cuda:N (gpu: cuda)",
      cxxopts::value<std::string>()->default_value("cpu"))(
      "dtype", "float32 (float), bfloat16 or float16 (autocast, as training)",
      cxxopts::value<std::string>()->default_value("float32"))(
      "data", "synthetic (a batch made once, in memory)",
      cxxopts::value<std::string>()->default_value("synthetic"))(
      "input_shape", "one sample's shape for a module file that does not say it (1,28,28)",
      cxxopts::value<std::string>())(
      "num_classes", "classes for a module file that does not say it", cxxopts::value<int64_t>())(
      "threads", "libtorch threads (0: all cores)", cxxopts::value<int>()->default_value("0"))(
      "seed", "seed of the synthetic batch and the model's weights",
      cxxopts::value<uint64_t>()->default_value("1"))(
      "allocator", kAllocatorHelp, cxxopts::value<std::string>()->default_value("caching"))(
      "json", "print the result as one JSON line (as ../shared/bench's references do)")(
      "h,help", "show this help");
  auto flags = parse(options, with_bool_values(args, "--forward_only"));
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  if (!flags.count("model")) {
    throw core::UsageError(
        "engine bench needs a model: engine bench --model mlp (see engine models)");
  }
  if (flags["data"].as<std::string>() != "synthetic") {
    throw core::UsageError("--data: only 'synthetic' is available so far, got '" +
                           flags["data"].as<std::string>() + "'");
  }
  const int threads = core::configure_threads(flags["threads"].as<int>());
  bench::PointOptions o;
  o.batch_size = flags["batch_size"].as<int64_t>();
  o.batches = flags["num_batches"].as<int64_t>();
  o.warmup_batches = flags["num_warmup_batches"].as<int64_t>();
  o.phase = bench::parse_phase(flags["phase"].as<std::string>());
  if (flag_bool(flags, "forward_only")) o.phase = bench::Phase::kInference;
  o.device = bench_device(flags["device"].as<std::string>());
  o.precision = bench_precision(flags["dtype"].as<std::string>());
  o.seed = flags["seed"].as<uint64_t>();

  const std::string model_name = flags["model"].as<std::string>();
  core::seed_everything(o.seed);
  auto runtime = make_runtime(model_name);
  auto model = lua::load_bench_model(*runtime, model_name);
  o.input_shape = flags.count("input_shape") ? shape_flag(flags["input_shape"].as<std::string>())
                                             : model.input_shape;
  o.classes = flags.count("num_classes") ? flags["num_classes"].as<int64_t>() : model.classes;
  if (o.input_shape.empty()) {
    throw core::UsageError(model_name +
                           " does not say its input shape: give --input_shape (1,28,28) or set "
                           "the class's input_shape field");
  }
  if (o.classes == 0) {
    throw core::UsageError(model_name +
                           " does not say its number of classes: give --num_classes or set the "
                           "class's classes field");
  }
  const auto result = bench::run_point(model.model, o);
  if (flags.count("json")) {
    print_json(model_name, o, threads, result);
  } else {
    print_text(model_name, o, threads, result);
  }
  return 0;
}

}  // namespace engine::cli
