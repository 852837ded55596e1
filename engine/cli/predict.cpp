// engine predict SCRIPT --checkpoint CKPT --input FILE [--output FILE]: predictions of the
// checkpoint's model for new rows (data.csv scripts: a CSV with the training columns) or images
// (data.image_folder, MNIST or CIFAR scripts: a CSV whose 'path' column lists image files), as
// CSV or JSON lines.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/format.hpp"
#include "engine/data/csv_reader.hpp"
#include "engine/data/image_codec.hpp"
#include "engine/data/image_folder.hpp"
#include "engine/data/tabular.hpp"
#include "engine/train/evaluator.hpp"

namespace engine::cli {
namespace {

namespace fs = std::filesystem;

struct PredictInput {
  std::optional<data::Pipeline> pipeline;
  std::vector<std::string> classes;  // class labels; empty: regression or unnamed classes
};

// The image files a CSV's 'path' column lists, relative to the CSV's folder unless absolute.
std::vector<std::string> listed_images(const std::string& input) {
  const auto rows = data::read_csv(input, ',');
  if (rows.empty()) throw core::DataError(input + ": no rows");
  const auto& header = rows.front().fields;
  const auto column = std::find(header.begin(), header.end(), "path");
  if (column == header.end()) {
    throw core::DataError(
        input + ": needs a 'path' column listing image files (header: " + core::join(header) + ")");
  }
  const size_t c = static_cast<size_t>(column - header.begin());
  std::vector<std::string> paths;
  const fs::path base = fs::path(input).parent_path();
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].fields.size() <= c) {
      throw core::DataError(input + ": line " + std::to_string(rows[r].line) + " has no path");
    }
    fs::path p = rows[r].fields[c];
    paths.push_back((p.is_absolute() ? p : base / p).string());
  }
  if (paths.empty()) throw core::DataError(input + ": lists no image");
  return paths;
}

// C x H x W with 1 or 3 channels when the source's samples are images of one size (MNIST,
// CIFAR, image tensors); nothing otherwise.
std::optional<std::vector<int64_t>> image_sample_shape(const data::Source& source) {
  if (source.size() == 0) return std::nullopt;
  const auto first = source.gather(torch::zeros({1}, torch::kInt64));
  if (!first.input.defined() || first.input.dim() != 4) return std::nullopt;
  const auto shape = first.input.sizes().slice(1).vec();
  if (shape[0] != 1 && shape[0] != 3) return std::nullopt;
  return shape;
}

// Listed images decoded as the training samples are: same channels, same size (checked, not
// resized), scaled to [0, 1] as the built-in image datasets are.
std::shared_ptr<data::Source> image_tensor_source(const std::vector<std::string>& paths,
                                                  const std::vector<int64_t>& shape,
                                                  const std::string& trained_on) {
  const auto mode = shape[0] == 1 ? data::ColorMode::kGray : data::ColorMode::kRgb;
  std::vector<torch::Tensor> images;
  for (const auto& path : paths) {
    auto image = data::decode_image(core::read_file(path), mode, path);
    if (image.size(1) != shape[1] || image.size(2) != shape[2]) {
      throw core::DataError(path + " is " + std::to_string(image.size(2)) + "x" +
                            std::to_string(image.size(1)) + " pixels; the model was trained on " +
                            std::to_string(shape[2]) + "x" + std::to_string(shape[1]) +
                            " images (" + trained_on + "): resize it first");
    }
    images.push_back(image);
  }
  return std::make_shared<data::TensorSource>(
      torch::stack(images), torch::Tensor(), "images(" + std::to_string(paths.size()) + " listed)");
}

// The input as the script's own pipeline would read it: same source kind, same statistics,
// same transforms, no shuffling.
PredictInput input_pipeline(const train::TrainSpec& spec, const std::string& checkpoint,
                            const std::string& input) {
  const data::Pipeline& model_data =
      spec.validation_data ? *spec.validation_data : *spec.train_data;
  const data::Source& source = model_data.source();
  PredictInput out;
  std::shared_ptr<const data::Source> new_source;
  if (auto* csv = dynamic_cast<const data::CsvSource*>(&source)) {
    auto stats = train::read_checkpoint_stats(checkpoint);
    std::shared_ptr<data::TabularStats> used =
        stats ? stats : std::make_shared<data::TabularStats>(*csv->stats());
    out.classes = used->class_target ? used->classes : std::vector<std::string>{};
    data::CsvOptions options = csv->options();
    options.path = input;
    options.stats = used;
    // the target column is optional in new data
    const auto rows = data::read_csv(input, options.delimiter);
    if (!used->target.empty() && options.header && !rows.empty()) {
      const auto& header = rows.front().fields;
      if (std::find(header.begin(), header.end(), used->target) == header.end()) {
        auto without = std::make_shared<data::TabularStats>(*used);
        without->target.clear();
        options.stats = without;
      }
    }
    new_source = std::make_shared<data::CsvSource>(options);
  } else if (auto* images = dynamic_cast<const data::ImageFolderSource*>(&source)) {
    out.classes = images->classes();
    new_source = std::make_shared<data::ImageListSource>(listed_images(input), images->mode());
  } else if (const auto shape = image_sample_shape(source)) {
    new_source = image_tensor_source(listed_images(input), *shape, source.describe());
  } else {
    throw core::UsageError(
        "engine predict reads new data for data.csv scripts, and images for scripts whose "
        "samples are images (data.image_folder, MNIST, CIFAR...); this script's data is " +
        source.describe());
  }
  data::Pipeline p(new_source);
  for (const auto& t : model_data.transforms()) p = p.map(t);
  out.pipeline = p.batch(model_data.batch_size()).workers(model_data.worker_count());
  return out;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Writes one line per sample: classes get the most likely label, its probability and every
// class's probability (softmax of the output: logits and log-probabilities alike); other
// outputs are written as they are.
class PredictionWriter {
 public:
  PredictionWriter(std::ostream& out, bool json, std::vector<std::string> classes,
                   bool class_output)
      : out_(out), json_(json), classes_(std::move(classes)), class_output_(class_output) {}

  void write(const data::Batch& batch, const torch::Tensor& output) {
    auto o = output.detach().to(torch::kCPU, torch::kFloat64);
    if (o.dim() == 1) o = o.unsqueeze(1);
    o = o.reshape({o.size(0), -1});
    auto rows = batch.indices.to(torch::kInt64);
    const bool classes = class_output_ && o.size(1) > 1;
    auto probs = classes ? torch::softmax(o, 1) : o;
    if (classes && labels_.empty()) {
      for (int64_t c = 0; c < o.size(1); ++c) {
        labels_.push_back(c < static_cast<int64_t>(classes_.size()) ? classes_[c]
                                                                    : std::to_string(c + 1));
      }
    }
    if (!header_done_ && !json_) {
      out_ << "row,prediction";
      if (classes) {
        out_ << ",probability";
        for (const auto& l : labels_) out_ << "," << csv_field("p_" + l);
      } else {
        for (int64_t k = 1; k < o.size(1); ++k) out_ << ",prediction_" << k + 1;
      }
      out_ << "\n";
    }
    header_done_ = true;
    auto p = probs.accessor<double, 2>();
    for (int64_t i = 0; i < o.size(0); ++i) {
      const int64_t row = rows[i].item<int64_t>() + 1;
      if (classes) {
        int64_t best = 0;
        for (int64_t c = 1; c < o.size(1); ++c) {
          if (p[i][c] > p[i][best]) best = c;
        }
        if (json_) {
          out_ << "{\"row\": " << row << ", \"prediction\": " << json_string(labels_[best])
               << ", \"probability\": " << number(p[i][best]) << ", \"probabilities\": {";
          for (int64_t c = 0; c < o.size(1); ++c) {
            out_ << (c ? ", " : "") << json_string(labels_[c]) << ": " << number(p[i][c]);
          }
          out_ << "}}\n";
        } else {
          out_ << row << "," << csv_field(labels_[best]) << "," << number(p[i][best]);
          for (int64_t c = 0; c < o.size(1); ++c) out_ << "," << number(p[i][c]);
          out_ << "\n";
        }
      } else if (json_) {
        out_ << "{\"row\": " << row << ", \"prediction\": ";
        if (o.size(1) == 1) {
          out_ << number(p[i][0]);
        } else {
          out_ << "[";
          for (int64_t k = 0; k < o.size(1); ++k) out_ << (k ? ", " : "") << number(p[i][k]);
          out_ << "]";
        }
        out_ << "}\n";
      } else {
        out_ << row;
        for (int64_t k = 0; k < o.size(1); ++k) out_ << "," << number(p[i][k]);
        out_ << "\n";
      }
    }
    count_ += o.size(0);
  }
  int64_t count() const { return count_; }

 private:
  std::ostream& out_;
  bool json_;
  std::vector<std::string> classes_, labels_;
  bool class_output_;
  bool header_done_ = false;
  int64_t count_ = 0;
};

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
  auto in = input_pipeline(spec, context.checkpoint(), input);
  spdlog::info("input: {}", in.pipeline->describe());

  std::ofstream file;
  if (!output.empty()) {
    file.open(output);
    if (!file) throw core::IoError("cannot write " + output);
  }
  std::ostream& out = output.empty() ? std::cout : file;
  const bool class_output = !in.classes.empty() || (spec.loss && spec.loss->takes_class_targets());
  PredictionWriter writer(out, format == "jsonl", in.classes, class_output);
  train::Evaluator evaluator(spec);
  evaluator.set_position(1, context.checkpoint_info().step);
  evaluator.run(*in.pipeline, [&](const data::Batch& batch, const torch::Tensor& output_) {
    if (!output_.defined()) {
      throw core::ScriptError(
          "evaluate_batch must return the model's output ({output = out, ...}) "
          "for engine predict");
    }
    writer.write(batch, output_);
  });
  out.flush();
  if (!output.empty()) {
    if (!file) throw core::IoError("cannot write " + output);
    std::fprintf(stderr, "%lld predictions written to %s\n", static_cast<long long>(writer.count()),
                 output.c_str());
  }
  return 0;
}

}  // namespace engine::cli
