// engine bench: one benchmark point from DLBS-style flags (engine bench --model ID ...), or a
// sweep from a Lua script (engine bench SWEEP.lua, see bench_sweep.cpp).
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include <ATen/Context.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <new>
#include <set>
#include <sstream>

#include "engine/bench/machine.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/bench/point.hpp"
#include "engine/bench/point_process.hpp"
#include "engine/bench/sweep_runner.hpp"
#include "engine/bench/sweep_tables.hpp"
#include "engine/cli/bench_point.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/cli/distributed.hpp"
#include "engine/core/device.hpp"
#include "engine/core/device_memory.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/gpu_facts.hpp"
#include "engine/core/seed.hpp"
#include "engine/core/statuses.hpp"
#include "engine/core/threads.hpp"
#include "engine/distributed/group.hpp"
#include "engine/io/bench_file.hpp"

namespace engine::cli {
namespace {

const char* const kBoolFlags[] = {"--forward_only",    "--data_loader_only", "--data_shuffle",
                                  "--cudnn_benchmark", "--cudnn_fastest",    "--tf32",
                                  "--cuda_graphs"};

// DLBS writes booleans as values (--forward_only false); a bare flag means true.
bool flag_bool(const cxxopts::ParseResult& flags, const char* name, bool otherwise = false) {
  if (!flags.count(name)) return otherwise;
  return core::parse_setting_bool(std::string("--") + name, flags[name].as<std::string>());
}

// DLBS writes "--forward_only false" as two words; cxxopts takes an implicit value only as
// "--forward_only=false", so the two words are joined first.
std::vector<std::string> with_bool_values(std::vector<std::string> args) {
  static const std::set<std::string> words = {"true", "false", "1", "0", "yes", "no", "on", "off"};
  for (const char* flag : kBoolFlags) {
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == flag && words.count(args[i + 1])) {
        args[i] += "=" + args[i + 1];
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      }
    }
  }
  return args;
}

// DLBS's device and dtype names as well as the engine's.
torch::Device bench_device(const std::string& name) {
  return core::parse_device(name == "gpu" ? "cuda" : name);
}

// A rank's device: --device cuda means this machine's GPU LOCAL_RANK, as in engine train.
torch::Device rank_device(torch::Device device, const distributed::World& world) {
  if (device.is_cuda() && !device.has_index() && world.distributed()) {
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(world.local_rank));
  }
  return device;
}

train::Precision bench_precision(const std::string& name) {
  if (name == "float" || name == "float32") return train::Precision::kFloat32;
  if (name == "bfloat16") return train::Precision::kBFloat16;
  if (name == "float16" || name == "half") return train::Precision::kFloat16;
  if (name == "float16_master") return train::Precision::kFloat16Master;
  throw core::UsageError(
      "--dtype must be float32 (float), bfloat16, float16 or float16_master, got '" + name + "'");
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

void add_point_flags(cxxopts::Options& options) {
  options.add_options()("model", "a zoo id (engine models) or the path of a Lua module file",
                        cxxopts::value<std::string>())(
      "batch_size", "samples per batch", cxxopts::value<int64_t>()->default_value("16"))(
      "num_batches", "timed batches", cxxopts::value<int64_t>()->default_value("20"))(
      "num_warmup_batches", "batches run first and not timed",
      cxxopts::value<int64_t>()->default_value("3"))(
      "phase", "training, inference or data_ingestion",
      cxxopts::value<std::string>()->default_value("training"))(
      "forward_only", "the inference phase (DLBS; takes true or false)",
      cxxopts::value<std::string>()->implicit_value("true"))(
      "data_loader_only", "the data_ingestion phase (DLBS; takes true or false)",
      cxxopts::value<std::string>()->implicit_value("true"))(
      "device", "cpu, cuda, cuda:N (gpu: cuda)",
      cxxopts::value<std::string>()->default_value("cpu"))(
      "dtype",
      "float32 (float), bfloat16 or float16 (autocast, as training), float16_master (DLBS's: a "
      "float16 model, float32 master weights)",
      cxxopts::value<std::string>()->default_value("float32"))(
      "data", "synthetic (a batch made once, in memory) or real (--data_dir through the loader)",
      cxxopts::value<std::string>()->default_value("synthetic"))(
      "data_dir", "the dataset's folder (the HDF5 file for hdf5) with --data real",
      cxxopts::value<std::string>())(
      "data_backend", "idx, cifar, image_folder or hdf5 with --data real",
      cxxopts::value<std::string>())("data_shuffle", "shuffle the data each epoch (true or false)",
                                     cxxopts::value<std::string>()->implicit_value("true"))(
      "num_loader_threads", "the loader's threads (0: its default)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "cudnn_benchmark", kCudnnBenchmarkHelp,
      cxxopts::value<std::string>()->implicit_value("true"))(
      "tf32", kTf32Help, cxxopts::value<std::string>()->implicit_value("true"))(
      "cuda_graphs",
      "record the training step as a CUDA graph and replay it (true or false; CUDA only; the "
      "first warm-up batches run eagerly)",
      cxxopts::value<std::string>()->implicit_value("true"))(
      "memory_format",
      "contiguous or channels_last: convolution weights and image batches laid out N x H x W x C "
      "(PyTorch's torch.channels_last)",
      cxxopts::value<std::string>()->default_value("contiguous"))(
      "max_device_memory",
      "the share of the GPU's memory libtorch's caching allocator may take: a fraction (0.5) or "
      "a size (20G); beyond it the point runs out of memory (CUDA only)",
      cxxopts::value<std::string>())(
      "cudnn_fastest", "DLBS's cuDNN flag (recorded as n/a: libtorch has no such setting)",
      cxxopts::value<std::string>()->implicit_value("true"))(
      "input_shape", "one sample's shape for a module file that does not say it (1,28,28)",
      cxxopts::value<std::string>())("num_classes",
                                     "classes for a module file that does not say it",
                                     cxxopts::value<int64_t>()->default_value("0"))(
      "threads", "libtorch threads (0: all cores)", cxxopts::value<int>()->default_value("0"))(
      "seed", "seed of the synthetic batch and the model's weights",
      cxxopts::value<uint64_t>()->default_value("1"))(
      "allocator", kAllocatorHelp, cxxopts::value<std::string>()->default_value("caching"))(
      "profile", "write a Chrome trace (chrome://tracing, Perfetto) of the timed batches here",
      cxxopts::value<std::string>())(
      "out", "also write the point to a benchmark file under OUT/bench/<model>/",
      cxxopts::value<std::string>())(
      "result",
      "write the point's result, or its failure, to this file (what a sweep's child "
      "processes do)",
      cxxopts::value<std::string>())(
      "json", "print the result as one JSON line (as ../shared/bench's references do)")(
      "h,help", "show this help");
  add_distributed_flags(options);  // --nproc N: a data-parallel point of N processes
}

struct PointRun {
  io::BenchPoint point;
  bench::PointOptions options;
  std::string model;
  std::vector<std::string> not_applicable;
};

// DLBS settings that cannot apply to this point are recorded, not refused.
std::vector<std::string> not_applicable(const cxxopts::ParseResult& flags,
                                        const bench::PointOptions& o) {
  std::vector<std::string> na;
  const bool cuda = o.device.is_cuda();
  if (!cuda && flags.count("cudnn_benchmark")) na.push_back("cudnn_benchmark (no cuDNN on cpu)");
  if (!cuda && flags.count("tf32")) na.push_back("tf32 (no TensorFloat-32 on cpu)");
  if (flags.count("cuda_graphs") && o.phase != bench::Phase::kTraining) {
    na.push_back("cuda_graphs (the training phase's step only)");
  }
  if (!cuda && flags.count("max_device_memory")) {
    na.push_back("max_device_memory (no device memory on cpu)");
  }
  if (flags.count("cudnn_fastest")) {
    na.push_back(cuda ? "cudnn_fastest (libtorch has no such setting)"
                      : "cudnn_fastest (no cuDNN on cpu)");
  }
  const bool loader = o.data.real || o.phase == bench::Phase::kDataIngestion;
  if (!o.data.real) {
    if (flags.count("data_dir")) na.push_back("data_dir (synthetic data)");
    if (flags.count("data_backend")) na.push_back("data_backend (synthetic data)");
  }
  if (!loader) {
    if (flags.count("data_shuffle")) na.push_back("data_shuffle (a synthetic batch in memory)");
    if (flags["num_loader_threads"].as<int64_t>() > 0) {
      na.push_back("num_loader_threads (a synthetic batch in memory)");
    }
  }
  return na;
}

bench::PointOptions point_options(const cxxopts::ParseResult& flags) {
  bench::PointOptions o;
  o.batch_size = flags["batch_size"].as<int64_t>();
  o.batches = flags["num_batches"].as<int64_t>();
  o.warmup_batches = flags["num_warmup_batches"].as<int64_t>();
  o.phase = bench::parse_phase(flags["phase"].as<std::string>());
  if (flag_bool(flags, "forward_only")) o.phase = bench::Phase::kInference;
  if (flag_bool(flags, "data_loader_only")) o.phase = bench::Phase::kDataIngestion;
  o.device = bench_device(flags["device"].as<std::string>());
  o.precision = bench_precision(flags["dtype"].as<std::string>());
  o.seed = flags["seed"].as<uint64_t>();
  o.data.real = bench::parse_data_kind(flags["data"].as<std::string>());
  if (flags.count("data_dir")) o.data.dir = flags["data_dir"].as<std::string>();
  if (flags.count("data_backend")) o.data.backend = flags["data_backend"].as<std::string>();
  o.data.shuffle = flag_bool(flags, "data_shuffle");
  o.data.loader_threads = static_cast<int>(flags["num_loader_threads"].as<int64_t>());
  if (o.data.loader_threads < 0) {
    throw core::UsageError("--num_loader_threads must be 0 or more, got " +
                           std::to_string(o.data.loader_threads));
  }
  if (flags.count("profile")) o.profile_path = flags["profile"].as<std::string>();
  core::apply_device_settings(device_settings(flags));
  o.cuda_graphs = flag_bool(flags, "cuda_graphs");
  const auto memory_format = flags["memory_format"].as<std::string>();
  if (memory_format != "contiguous" && memory_format != "channels_last") {
    throw core::UsageError("--memory_format must be contiguous or channels_last, got '" +
                           memory_format + "'");
  }
  o.channels_last = memory_format == "channels_last";
  if (o.cuda_graphs && o.phase == bench::Phase::kTraining && o.warmup_batches < 3) {
    throw core::UsageError(
        "--cuda_graphs needs --num_warmup_batches 3 or more: the step is recorded at the third "
        "batch, after two eager ones, and a recording must not be timed");
  }
  if (flags.count("max_device_memory") && o.device.is_cuda()) {
    o.device_memory_fraction =
        bench::device_memory_fraction(flags["max_device_memory"].as<std::string>(),
                                      core::device_memory_bytes(o.device), "--max_device_memory");
  }
  return o;
}

// "categorical [8], input [5]": the inputs of a batch by name, with one sample's shape.
std::string example_shapes(const data::Batch& batch) {
  std::string text;
  for (const auto& [name, tensor] : batch.named_inputs()) {
    text += (text.empty() ? "" : ", ") + name + " " + core::shape_string(tensor.sizes().slice(1));
  }
  return text;
}

// Runs the point the flags describe; throws what the point throws.
PointRun measure(const cxxopts::ParseResult& flags, int threads,
                 distributed::Group* group = nullptr) {
  if (!flags.count("model")) {
    throw core::UsageError(
        "engine bench needs a model (engine bench --model mlp, see engine models) or a sweep "
        "script (engine bench scripts/bench/quick.lua)");
  }
  PointRun run;
  run.options = point_options(flags);
  run.options.group = group;
  if (group) run.options.device = rank_device(run.options.device, group->world());
  run.not_applicable = not_applicable(flags, run.options);
  auto& o = run.options;
  run.model = flags["model"].as<std::string>();
  core::seed_everything(o.seed);
  auto session = make_session(run.model);
  auto model = session->bench_model(run.model);
  o.input_shape = flags.count("input_shape") ? shape_flag(flags["input_shape"].as<std::string>())
                                             : model.input_shape;
  const int64_t classes = flags["num_classes"].as<int64_t>();
  o.classes = classes > 0 ? classes : model.classes;
  o.example_batch = model.example_batch;
  if (o.input_shape.empty() && !o.example_batch) {
    throw core::UsageError(run.model +
                           " does not say its input shape: give --input_shape (1,28,28) or set "
                           "the class's input_shape field");
  }
  if (o.classes == 0) {
    throw core::UsageError(run.model +
                           " does not say its number of classes: give --num_classes or set the "
                           "class's classes field");
  }
  const auto result = bench::run_point(model.model, o);
  auto& row = run.point.row;
  row.model = run.model;
  row.phase = bench::phase_name(o.phase);
  row.device = o.device.str();
  row.dtype = train::precision_name(o.precision);
  row.batch_size = o.batch_size;
  row.threads = threads;
  row.world_size = group ? group->size() : 1;
  row.status = core::PointStatus::kOk;
  const auto& s = result.summary;
  bench::record_summary(row, s);
  row.peak_resident_bytes = result.peak_resident_bytes;
  row.peak_device_bytes = result.peak_device_bytes;
  row.repeats = 1;
  run.point.batch_ms = result.batch_ms;
  run.point.part_ms = result.part_ms;
  bench::record_parts(row, result.part_ms);
  run.point.batch_repeat.assign(result.batch_ms.size(), 0);
  run.point.details["min_ms"] = s.min_ms;
  run.point.details["max_ms"] = s.max_ms;
  run.point.details["loss"] = result.loss;
  run.point.details["not_applicable"] = core::join(run.not_applicable);
  // a model that makes its own batches: the shapes of one, by input
  run.point.details["input_shape"] =
      o.example_batch ? example_shapes(o.example_batch(1)) : core::shape_string(o.input_shape);
  run.point.details["classes"] = o.classes;
  if (o.device.is_cuda()) {
    run.point.details["peak_device_reserved_bytes"] = result.peak_device_reserved_bytes;
  }
  for (const auto& [name, value] : bench::machine_state()) run.point.details[name] = value;
  for (const auto& [name, value] : core::device_settings_in_force()) {
    run.point.details[name] = value;
  }
  for (const auto& [name, value] : core::gpu_facts(o.device)) run.point.details[name] = value;
  run.point.details["memory_format"] =
      std::string(o.channels_last ? "channels_last" : "contiguous");
  run.point.details["cuda_graphs"] = o.cuda_graphs;
  return run;
}

void print_json(const PointRun& run) {
  const auto& r = run.point.row;
  const auto found = run.point.details.find("peak_device_reserved_bytes");
  const int64_t reserved = found == run.point.details.end() ? 0 : std::get<int64_t>(found->second);
  nlohmann::ordered_json line{{"impl", "engine"}};
  for (const auto& [key, value] : io::json_fields(r)) {
    std::visit(
        [&, &key = key](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
            line[key] = nullptr;
          } else {
            line[key] = v;
          }
        },
        value);
  }
  const auto min_ms = io::json_figure(std::get<double>(run.point.details.at("min_ms")));
  line["min_ms"] = min_ms ? nlohmann::json(*min_ms) : nlohmann::json(nullptr);
  line["peak_device_reserved_bytes"] = reserved;
  std::printf("%s\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

void print_text(const PointRun& run) {
  const auto& r = run.point.row;
  const auto loss = std::get<std::string>(run.point.details.at("loss"));
  std::printf("%s, %s, batch %lld, %s, %s, %lld thread%s%s\n", r.model.c_str(), r.phase.c_str(),
              static_cast<long long>(r.batch_size), r.dtype.c_str(), r.device.c_str(),
              static_cast<long long>(r.threads), r.threads == 1 ? "" : "s",
              loss.empty() ? "" : (", " + loss).c_str());
  std::printf(
      "  %lld timed batches: mean %.3f ms (std %.3f), p50 %.3f, p90 %.3f, p99 %.3f, "
      "min %.3f\n",
      static_cast<long long>(r.num_batches), r.mean_ms, r.std_ms, r.p50_ms, r.p90_ms, r.p99_ms,
      std::get<double>(run.point.details.at("min_ms")));
  if (r.world_size > 1) {
    std::printf("  %lld processes of batch %lld each (times of rank 0): %.1f samples/s each\n",
                static_cast<long long>(r.world_size), static_cast<long long>(r.batch_size),
                r.throughput_per_rank);
  }
  std::printf("  %.1f samples/s (from the mean), %.1f (from p50); peak memory %.0f MiB\n",
              r.throughput, r.throughput_p50,
              static_cast<double>(r.peak_resident_bytes) / (1 << 20));
  if (r.peak_device_bytes > 0) {
    std::printf("  peak device memory %.0f MiB\n",
                static_cast<double>(r.peak_device_bytes) / (1 << 20));
  }
  const auto parts = bench::parts_text(r);
  if (!parts.empty()) std::printf("  parts: %s\n", parts.c_str());
  if (!run.not_applicable.empty()) {
    std::printf("  n/a here: %s\n", core::join(run.not_applicable).c_str());
  }
}

// How a failed point's error is classified: the exception's type first, then its message.
std::string failure_kind_of(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) || dynamic_cast<const c10::OutOfMemoryError*>(&e) ||
      dynamic_cast<const core::OutOfMemory*>(&e)) {
    return "oom";
  }
  return bench::failure_kind(core::describe_exception(e));
}

// with_machine: the machine's description (which runs BLAS once: not after running out of
// memory, where OpenBLAS would wait for its buffer forever).
// A point that failed with e: its status, the kind of failure, the first line and the whole.
io::BenchPoint failed_point(const std::exception& e) {
  io::BenchPoint failed;
  failed.row.status = core::PointStatus::kFailed;
  failed.row.error_kind = failure_kind_of(e);
  failed.row.reason = bench::first_line(core::describe_exception(e));
  failed.details["error"] = core::describe_exception(e);
  return failed;
}

void write_single(const std::string& path, const io::BenchPoint& point, const std::string& command,
                  bool with_machine) {
  io::BenchInfo info;
  info.name = point.row.model;
  info.command = command;
  if (with_machine) {
    for (const auto& [name, value] : bench::machine_description()) info.machine[name] = value;
  }
  io::BenchFile file(path, info);
  io::BenchPoint stored = point;
  stored.row.point = file.point_count();
  file.write_point(stored);
  file.finish(point.row.status == core::PointStatus::kOk ? core::FileStatus::kCompleted
                                                         : core::FileStatus::kFailed);
}

int bench_point(const std::vector<std::string>& args) {
  cxxopts::Options options("engine bench",
                           "Time one benchmark point: a model's training step, forward pass or "
                           "the loader alone (DLBS's flag names), or run a sweep: engine bench "
                           "SWEEP.lua (engine bench SWEEP.lua --help).");
  add_point_flags(options);
  auto flags = parse(options, with_bool_values(args));
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  if (auto code = launch_if_asked(flags, "bench", args)) return *code;
  const int threads = core::configure_threads(threads_of_this_process(flags["threads"].as<int>()));
  const std::string result_path = flags.count("result") ? flags["result"].as<std::string>() : "";
  const std::string command = "engine bench " + core::join(args, " ");
  // a data-parallel point (--nproc, or a scheduler's RANK / WORLD_SIZE): rank 0 reports it
  const distributed::World world = world_of(flags);
  std::unique_ptr<distributed::Group> group;
  PointRun run;
  try {
    if (world.distributed()) {
      group = std::make_unique<distributed::Group>(
          world, rank_device(bench_device(flags["device"].as<std::string>()), world));
    }
    run = measure(flags, threads, group.get());
  } catch (const std::exception& e) {
    if (!result_path.empty() && world.rank == 0) {
      // the sweep reads why the point failed from here; the error still goes to stderr
      io::BenchPoint failed = failed_point(e);
      failed.row.model = flags.count("model") ? flags["model"].as<std::string>() : "";
      failed.row.phase = flags["phase"].as<std::string>();
      failed.row.threads = threads;
      write_single(result_path, failed, command, false);
    }
    throw;
  }
  if (world.rank != 0) return 0;
  if (!result_path.empty()) write_single(result_path, run.point, command, false);
  if (flags.count("out")) {
    const auto path = io::BenchFile::new_path(flags["out"].as<std::string>(),
                                              std::filesystem::path(run.model).stem().string());
    write_single(path, run.point, command, true);
    std::printf("  written to %s\n  show it: engine report %s\n", path.c_str(), path.c_str());
  }
  if (flags.count("json")) {
    print_json(run);
  } else {
    print_text(run);
  }
  if (!run.options.profile_path.empty()) {
    std::printf("  profile: %s (open in chrome://tracing or ui.perfetto.dev)\n",
                run.options.profile_path.c_str());
  }
  return 0;
}

}  // namespace

io::BenchPoint run_point_in_process(const bench::Point& point) {
  const auto args = with_bool_values(bench::point_flags(point));
  cxxopts::Options options("engine bench", "");
  add_point_flags(options);
  io::BenchPoint failed;
  try {
    auto flags = parse(options, args);
    if (flags.count("nproc") && flags["nproc"].as<int>() > 1) {
      throw core::UsageError("world_size " + std::to_string(flags["nproc"].as<int>()) +
                             " starts processes of its own: run the sweep with --isolate process");
    }
    const int threads = core::configure_threads(flags["threads"].as<int>());
    return measure(flags, threads).point;
  } catch (const std::exception& e) {
    failed = failed_point(e);
  }
  failed.row.model = bench::param_text(point, "model");
  failed.row.phase = bench::param_text(point, "phase");
  failed.row.device = bench::param_text(point, "device");
  failed.row.dtype = bench::param_text(point, "dtype");
  failed.row.batch_size = bench::param_int(point, "batch_size");
  return failed;
}

int bench_command(const std::vector<std::string>& args) {
  // a first argument that is not a flag is a sweep script
  if (!args.empty() && args.front().rfind("-", 0) != 0) return bench_sweep(args);
  return bench_point(args);
}

}  // namespace engine::cli
