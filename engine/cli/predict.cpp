// engine predict SCRIPT --checkpoint CKPT --input FILE [--output FILE]: predictions of the
// checkpoint's model for new rows (data.csv scripts: a CSV with the training columns) or images
// (data.image_folder, MNIST or CIFAR scripts: a CSV whose 'path' column lists image files), as
// CSV or JSON lines.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/activity.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/log.hpp"
#include "engine/core/staged_output.hpp"
#include "engine/io/prediction_writer.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/evaluator.hpp"

namespace engine::cli {
namespace {

namespace fs = std::filesystem;

// The input as the script's own pipeline would read it: the source's own reading of new data
// (with what the checkpoint kept of the training source), the same transforms, no shuffling.
data::Pipeline input_pipeline(const data::Pipeline& model_data, const std::string& checkpoint,
                              const std::string& input) {
  data::Pipeline p(train::prediction_source(checkpoint, model_data.source(), input));
  for (const auto& t : model_data.transforms()) p = p.map(t);
  return p.batch(model_data.batch_size()).workers(model_data.worker_count());
}

}  // namespace

int predict_command(const std::vector<std::string>& args) {
  cxxopts::Options options("engine predict",
                           "Predictions of a checkpoint's model for new data (CSV or images).");
  options.add_options()("checkpoint", kCheckpointHelp, cxxopts::value<std::string>())(
      "input", "CSV: rows with the training columns, or a 'path' column of images",
      cxxopts::value<std::string>())("output", "file to write (default: standard output)",
                                     cxxopts::value<std::string>())(
      "format", "csv or jsonl (default: from --output's extension, else csv)",
      cxxopts::value<std::string>());
  const std::string usage =
      "a script, a checkpoint and an input: engine predict SCRIPT.lua --checkpoint CKPT --input "
      "FILE.csv [--output FILE]";
  const auto parsed = parse_script_command(options, args, usage);
  if (!parsed) return 0;
  const auto& flags = *parsed;
  if (!flags.count("input")) throw core::UsageError("engine predict needs " + usage);
  const std::string input = flags["input"].as<std::string>();
  if (!fs::is_regular_file(input)) throw core::UsageError("--input " + input + ": no such file");
  const std::string output = flags.count("output") ? flags["output"].as<std::string>() : "";
  std::string format = flags.count("format") ? flags["format"].as<std::string>() : "";
  if (format.empty()) {
    const auto ext = fs::path(output).extension().string();
    format = ext == ".jsonl" || ext == ".json" || ext == ".ndjson" ? "jsonl" : "csv";
  }
  if (format != "csv" && format != "jsonl") {
    throw core::UsageError("--format must be csv or jsonl, got '" + format + "'");
  }
  run::RunContext context(checkpoint_request("engine predict", flags, args),
                          run::CheckpointUse::kWeights);
  auto& spec = context.spec();
  const data::Pipeline& model_data =
      spec.validation_data ? *spec.validation_data : *spec.train_data;
  const auto pipeline = input_pipeline(model_data, context.checkpoint(), input);
  core::log::info("input: {}", pipeline.describe());
  auto classes = pipeline.source().class_names();
  if (classes.empty()) classes = model_data.source().class_names();
  if (classes.empty()) classes = spec.class_names;  // the script's `classes`

  // written whole or not at all: a failure half-way leaves a file already there as it was
  std::optional<core::StagedOutput> file;
  if (!output.empty()) file.emplace(output);
  std::ostream& out = file ? file->stream() : std::cout;
  const bool class_output = !classes.empty() || (spec.loss && spec.loss->takes_class_targets());
  io::PredictionWriter writer(
      out, format == "jsonl" ? io::PredictionFormat::kJsonLines : io::PredictionFormat::kCsv,
      classes, class_output);
  train::Evaluator evaluator(spec);
  evaluator.set_position(1, context.checkpoint_info().step);
  core::Activity activity("the predictions");
  evaluator.run(pipeline, [&](const data::Batch& batch, const torch::Tensor& output_) {
    if (!output_.defined()) {
      throw core::ScriptError(
          "evaluate_batch must return the model's output ({output = out, ...}) "
          "for engine predict");
    }
    // the file each sample came from, where the input lists files (images)
    std::vector<std::string> paths;
    const auto rows = batch.indices.to(torch::kCPU, torch::kInt64);
    const auto index = rows.accessor<int64_t, 1>();
    for (int64_t i = 0; i < index.size(0); ++i) {
      std::string path = pipeline.source().sample_path(index[i]);
      if (path.empty()) break;
      paths.push_back(std::move(path));
    }
    writer.write(batch.indices, output_, paths);
    if (file) file->check();
  });
  if (!file) out.flush();
  if (file) {
    file->publish();
    std::fprintf(stderr, "%lld predictions written to %s\n", static_cast<long long>(writer.count()),
                 output.c_str());
  }
  return 0;
}

}  // namespace engine::cli
