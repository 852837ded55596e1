// What a checkpoint keeps of a data.csv source (its training statistics, under
// /data/train_stats as docs/run-files.md describes) and how engine predict reads new rows with
// them.
#include <algorithm>

#include "engine/core/errors.hpp"
#include "engine/data/tabular.hpp"
#include "engine/io/hdf5.hpp"
#include "engine/io/tensor_archive.hpp"

namespace engine::data {
namespace {

namespace h5 = io::h5;

constexpr const char* kGroup = "train_stats";

// A list of arbitrary strings (empty ones, line breaks) as one string: escaped, one per line,
// prefixed by the count.
std::string encode_list(const std::vector<std::string>& items) {
  std::string out = std::to_string(items.size());
  for (const auto& item : items) {
    out += '\n';
    for (char c : item) {
      if (c == '\\')
        out += "\\\\";
      else if (c == '\n')
        out += "\\n";
      else
        out += c;
    }
  }
  return out;
}

std::vector<std::string> decode_list(const std::string& text) {
  std::vector<std::string> out;
  const auto first = text.find('\n');
  const size_t count = std::stoul(text.substr(0, first));
  size_t i = first == std::string::npos ? text.size() : first + 1;
  while (out.size() < count) {
    if (i > text.size()) throw std::runtime_error("a list is shorter than its count");
    std::string item;
    for (; i < text.size() && text[i] != '\n'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        item += text[++i] == 'n' ? '\n' : text[i];
      } else {
        item += text[i];
      }
    }
    ++i;
    out.push_back(item);
  }
  return out;
}

std::shared_ptr<TabularStats> read_stats(hid_t data_group);

// A damaged /data/train_stats (a list that does not decode) is a DataError, not a crash.
std::shared_ptr<TabularStats> read_saved_stats(hid_t data_group) {
  try {
    return read_stats(data_group);
  } catch (const core::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw core::DataError(std::string("the checkpoint's /data/") + kGroup + " cannot be read (" +
                          e.what() + ")");
  }
}

std::shared_ptr<TabularStats> read_stats(hid_t data_group) {
  auto g = h5::open_group(data_group, kGroup);
  auto stats = std::make_shared<TabularStats>();
  const auto names = decode_list(h5::read_string_attribute(g.get(), "numeric"));
  auto means = io::read_tensor(g.get(), "numeric_mean").to(torch::kFloat64);
  auto stds = io::read_tensor(g.get(), "numeric_std").to(torch::kFloat64);
  for (size_t i = 0; i < names.size(); ++i) {
    const auto k = static_cast<int64_t>(i);
    stats->numeric.push_back({names[i], means[k].item<double>(), stds[k].item<double>()});
  }
  auto vocab = h5::open_group(g.get(), "vocabulary");
  for (const auto& name : decode_list(h5::read_string_attribute(g.get(), "categorical"))) {
    stats->categorical.push_back({name, decode_list(h5::read_string_attribute(vocab.get(), name))});
  }
  stats->target = h5::read_string_attribute(g.get(), "target");
  stats->class_target = std::get<bool>(h5::read_attributes(g.get()).at("class_target"));
  stats->classes = decode_list(h5::read_string_attribute(g.get(), "classes"));
  return stats;
}

}  // namespace

// numeric columns (names, means, stds), categorical vocabularies, target and classes
void CsvSource::save_state(const io::h5::Handle& data_group) const {
  auto g = h5::create_group(data_group.get(), kGroup);
  std::vector<std::string> names;
  std::vector<double> means, stds;
  for (const auto& n : stats_->numeric) {
    names.push_back(n.name);
    means.push_back(n.mean);
    stds.push_back(n.std);
  }
  h5::write_attribute(g.get(), "numeric", encode_list(names));
  io::write_tensor(g.get(), "numeric_mean", torch::tensor(means, torch::kFloat64));
  io::write_tensor(g.get(), "numeric_std", torch::tensor(stds, torch::kFloat64));
  names.clear();
  for (const auto& c : stats_->categorical) names.push_back(c.name);
  h5::write_attribute(g.get(), "categorical", encode_list(names));
  auto vocab = h5::create_group(g.get(), "vocabulary");
  for (const auto& c : stats_->categorical)
    h5::write_attribute(vocab.get(), c.name, encode_list(c.values));
  h5::write_attribute(g.get(), "target", stats_->target);
  h5::write_attribute(g.get(), "class_target", stats_->class_target);
  h5::write_attribute(g.get(), "classes", encode_list(stats_->classes));
}

std::shared_ptr<Source> CsvSource::prediction_source(const std::string& input,
                                                     const io::h5::Handle& saved) const {
  const bool has_saved = saved && h5::exists(saved.get(), kGroup);
  std::shared_ptr<TabularStats> stats =
      has_saved ? read_saved_stats(saved.get()) : std::make_shared<TabularStats>(*stats_);
  CsvOptions options = options_;
  options.path = input;
  // the target column is optional in new data
  const auto rows = read_csv(input, options.delimiter);
  if (!stats->target.empty() && options.header && !rows.empty()) {
    const auto& header = rows.front().fields;
    if (std::find(header.begin(), header.end(), stats->target) == header.end()) {
      stats->target.clear();
    }
  }
  options.stats = stats;
  return std::make_shared<CsvSource>(options);
}

std::vector<std::string> CsvSource::class_names() const {
  return stats_->class_target ? stats_->classes : std::vector<std::string>{};
}

}  // namespace engine::data
