#include "engine/cli/distributed.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <torch/cuda.h>

#include "engine/cli/common.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/log.hpp"
#include "engine/core/threads.hpp"
#include "engine/distributed/launcher.hpp"
#include "engine/train/checkpoint.hpp"

namespace engine::cli {
namespace {

namespace fs = std::filesystem;

// Where rank 0 writes its run file's path, for the launcher's restarts.
constexpr const char* kRunFileNoteVariable = "ENGINE_RUN_FILE_NOTE";

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

std::chrono::milliseconds timeout_of(const cxxopts::ParseResult& flags) {
  const double seconds = flags["dist_timeout"].as<double>();
  if (!(seconds > 0) || !std::isfinite(seconds)) {
    throw core::UsageError("--dist_timeout needs a positive number of seconds");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// args without `flag` and its value (both spellings: --flag V, --flag=V).
std::vector<std::string> without_flag(const std::vector<std::string>& args,
                                      const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag) {
      ++i;
      continue;
    }
    if (args[i].rfind(flag + "=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  return out;
}

std::string read_note(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// torchrun's PET_NPROC_PER_NODE (Kubeflow's nprocPerNode) as a number of workers: a count, or
// torchrun's auto / gpu (one per GPU, else one) and cpu (one: its threads take the cores).
int pet_workers(const std::string& text) {
  if (text == "auto" || text == "gpu") {
    return torch::cuda::is_available()
               ? std::max<int>(1, static_cast<int>(torch::cuda::device_count()))
               : 1;
  }
  if (text == "cpu") return 1;
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 1 || n > 4096) {
    throw core::UsageError("PET_NPROC_PER_NODE=" + text +
                           " is not a number of workers (a count, auto, gpu or cpu)");
  }
  return static_cast<int>(n);
}

// torchrun's PET_NNODES: N, or MIN:MAX (elastic), which the engine takes only as one number.
int pet_nodes(const std::string& text) {
  const auto colon = text.find(':');
  const std::string low = text.substr(0, colon),
                    high = colon == std::string::npos ? low : text.substr(colon + 1);
  char* end = nullptr;
  const long n = std::strtol(high.c_str(), &end, 10);
  if (high.empty() || *end != '\0' || n < 1 || n > 1 << 20 || low != high) {
    throw core::UsageError("PET_NNODES=" + text +
                           (low != high ? ": an elastic range; the engine's jobs have a fixed "
                                          "number of machines (give one number)"
                                        : " is not a number of machines"));
  }
  return static_cast<int>(n);
}

int pet_node_rank(const std::string& text) {
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 0 || n > 1 << 20) {
    throw core::UsageError("PET_NODE_RANK=" + text + " is not a machine's place (0, 1, ...)");
  }
  return static_cast<int>(n);
}

}  // namespace

void add_distributed_flags(cxxopts::Options& options) {
  options.add_options("distributed")(
      "nproc", "start N worker processes on this machine, data-parallel (docs/distributed.md)",
      cxxopts::value<int>())("nnodes", "machines in the job, each running engine with --nproc",
                             cxxopts::value<int>()->default_value("1"))(
      "node_rank", "this machine's place among them, from 0",
      cxxopts::value<int>()->default_value("0"))(
      "master_addr",
      "address of the machine that runs rank 0 (default $MASTER_ADDR, else 127.0.0.1)",
      cxxopts::value<std::string>())(
      "master_port",
      "rendezvous port there (default $MASTER_PORT, else a free port on one machine, 29500 on "
      "several)",
      cxxopts::value<int>())("dist_timeout",
                             "seconds a rank waits for the others before it fails (rendezvous, "
                             "each collective)",
                             cxxopts::value<double>()->default_value("60"))(
      "max_restarts", "restart the whole group from its last checkpoint up to N times",
      cxxopts::value<int>()->default_value("0"));
}

namespace {

// The launch's world from the flags, else torchrun's PET_* variables (`pet`), else one machine;
// the rendezvous from the flags, PET_MASTER_*, MASTER_* as given.
distributed::LaunchOptions world_of(const cxxopts::ParseResult& flags, bool pet) {
  distributed::LaunchOptions options;
  const auto pet_nproc = environment("PET_NPROC_PER_NODE");
  const auto pet_nnodes = environment("PET_NNODES");
  options.nproc = flags.count("nproc") ? flags["nproc"].as<int>()
                  : pet_nproc          ? pet_workers(*pet_nproc)
                                       : 1;
  options.nnodes = flags.count("nnodes") ? flags["nnodes"].as<int>()
                   : pet_nnodes          ? pet_nodes(*pet_nnodes)
                                         : 1;
  const auto pet_rank = environment("PET_NODE_RANK");
  options.node_rank = flags.count("node_rank") ? flags["node_rank"].as<int>()
                      : pet_rank               ? pet_node_rank(*pet_rank)
                                               : 0;
  if (pet) {
    core::log::info("torchrun's PET_* variables: node {} of {}, {} worker{} each",
                    options.node_rank, options.nnodes, options.nproc,
                    options.nproc == 1 ? "" : "s");
  }
  options.timeout = timeout_of(flags);
  options.max_restarts = flags["max_restarts"].as<int>();
  if (options.max_restarts > 0 && options.nnodes > 1) {
    throw core::UsageError(
        "--max_restarts restarts the processes of one machine; on several machines let the "
        "scheduler restart the job (docs/distributed.md)");
  }
  if (flags.count("master_addr")) {
    options.master_addr = flags["master_addr"].as<std::string>();
  } else if (auto pet_addr = environment("PET_MASTER_ADDR")) {
    options.master_addr = *pet_addr;
  } else if (auto addr = environment("MASTER_ADDR")) {
    options.master_addr = *addr;
  } else if (options.nnodes > 1) {
    throw core::UsageError("--nnodes " + std::to_string(options.nnodes) +
                           " needs --master_addr: the address of the machine with --node_rank 0");
  }
  const auto pet_port = environment("PET_MASTER_PORT");
  if (flags.count("master_port")) {
    options.master_port = flags["master_port"].as<int>();
  } else if (pet_port) {
    char* end = nullptr;
    const long port = std::strtol(pet_port->c_str(), &end, 10);
    if (pet_port->empty() || *end != '\0' || port < 1 || port > 65535) {
      throw core::UsageError("PET_MASTER_PORT=" + *pet_port + " is not a port (1-65535)");
    }
    options.master_port = static_cast<int>(port);
  } else if (const auto port = distributed::master_port_from(distributed::process_environment())) {
    options.master_port = *port;
  }
  if (options.master_port < 0 || options.master_port > 65535) {
    throw core::UsageError("--master_port " + std::to_string(options.master_port) +
                           " is not a port (1-65535)");
  }
  return options;
}

}  // namespace

std::optional<int> launch_if_asked(const cxxopts::ParseResult& flags, const std::string& command,
                                   const std::vector<std::string>& args, int requested_threads) {
  if (environment(distributed::kLaunchedVariable)) return std::nullopt;
  // torchrun's environment as Kubeflow sets it (PyTorchJob's nprocPerNode, Trainer v2): this
  // machine is one node that starts its workers, whatever RANK / WORLD_SIZE the operator set too
  const auto pet_nproc = environment("PET_NPROC_PER_NODE");
  const auto pet_nnodes = environment("PET_NNODES");
  const bool pet = pet_nproc || pet_nnodes;
  if (!flags.count("nproc") && !pet) return std::nullopt;
  if (!pet && (environment("RANK") || environment("WORLD_SIZE"))) {
    throw core::UsageError(
        "--nproc starts worker processes itself, but RANK / WORLD_SIZE are set: under torchrun or "
        "a scheduler that starts one process per slot, leave --nproc out");
  }
  if (flags.count("quiet")) core::log::set_level(core::log::Level::warn);
  distributed::LaunchOptions options = world_of(flags, pet);
  const int threads = requested_threads > 0 ? requested_threads : core::available_cores();
  options.threads_per_worker = std::max(1, threads / std::max(1, options.nproc));

  // rank 0 writes its run file's path here; a restart resumes from that run's last checkpoint
  std::string note = (fs::temp_directory_path() / "engine-launch-XXXXXX").string();
  const int fd = mkstemp(note.data());
  if (fd >= 0) close(fd);
  setenv(kRunFileNoteVariable, note.c_str(), 1);
  std::vector<std::string> worker_args{command};
  worker_args.insert(worker_args.end(), args.begin(), args.end());
  options.arguments = [worker_args, note](int attempt) {
    if (attempt == 0) return worker_args;
    const std::string run_file = read_note(note);
    if (run_file.empty()) return worker_args;  // it failed before writing one: start afresh
    try {
      const auto checkpoint = train::resolve_checkpoint(run_file, "--resume");
      auto resumed = without_flag(worker_args, "--resume");
      resumed.insert(resumed.end(), {"--resume", checkpoint});
      core::log::info("resuming from {}", checkpoint);
      return resumed;
    } catch (const core::Error& e) {
      core::log::warn("no checkpoint to resume from ({}): starting afresh", e.what());
      return worker_args;
    }
  };
  options.note = [](const std::string& text) { core::log::info("{}", text); };
  const int code = distributed::launch(options);
  std::remove(note.c_str());
  return code;
}

std::string resume_launch(const std::vector<std::string>& args, const distributed::World& world) {
  if (!world.distributed()) return "";
  std::string words;
  bool node_rank = false;
  for (size_t i = 0; i < args.size(); ++i) {
    for (const char* name : {"--nproc", "--nnodes", "--node_rank", "--master_addr", "--master_port",
                             "--dist_timeout", "--max_restarts"}) {
      const std::string flag = name;
      if (args[i] == flag && i + 1 < args.size()) {
        words += " " + flag + " " + shell_word(args[i + 1]);
      } else if (args[i].rfind(flag + "=", 0) == 0) {
        words += " " + shell_word(args[i]);
      } else {
        continue;
      }
      node_rank = node_rank || flag == "--node_rank";
    }
  }
  if (!world.launched) {
    return words + " (on every rank, started as this job's ranks were: " + world.source + ")";
  }
  if (environment("PET_NPROC_PER_NODE") || environment("PET_NNODES")) {
    return words + " (in every pod, with its PET_* variables as now)";
  }
  if (node_rank) words += " (on the other machines, with their own --node_rank)";
  return words;
}

distributed::World world_of(const cxxopts::ParseResult& flags) {
  distributed::World world =
      distributed::world_from_environment(distributed::process_environment());
  world.timeout = timeout_of(flags);
  return world;
}

int apply_threads(int requested, const distributed::World& world) {
  const auto choice =
      distributed::choose_threads(requested, world, distributed::process_environment());
  const int threads = core::configure_threads(choice.threads);
  if (const int cores = core::available_cores(); threads > cores) {
    // libtorch's threads then take turns on the cores: an epoch can take many times as long
    core::log::warn(
        "{} threads on the {} core{} this process may use: the threads will take turns, and a "
        "step can take many times as long (--threads 0 uses every core)",
        threads, cores, cores == 1 ? "" : "s");
  }
  if (world.distributed()) {
    core::log::info("rank {}: {} thread{} ({})", world.rank, threads, threads == 1 ? "" : "s",
                    choice.reason);
  } else {
    core::log::debug("{} thread{} ({})", threads, threads == 1 ? "" : "s", choice.reason);
  }
  return threads;
}

void tell_launcher_run_file(const std::string& path) {
  const auto note = environment(kRunFileNoteVariable);
  if (!note) return;
  std::ofstream out(*note, std::ios::trunc);
  out << path << "\n";
}

}  // namespace engine::cli
