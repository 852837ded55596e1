// CSV files with the options that describe their columns (header or not, delimiter, target,
// numeric and categorical columns, missing values, bad rows), as data.csv reads them; then
// a second file read with the first one's statistics, as engine predict does.
#include <memory>

#include "engine/data/csv_reader.hpp"
#include "engine/data/tabular.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

std::vector<std::string> column_names(engine::fuzz::Bytes& in) {
  static const std::vector<std::string> kNames = {"a", "b", "c", "label", "1", "2", "x y", ""};
  std::vector<std::string> out(static_cast<size_t>(in.in_range(0, 3)));
  for (auto& name : out) name = in.pick(kNames);
  return out;
}

}  // namespace

ENGINE_FUZZ_TARGET(csv) {
  using namespace engine::data;
  engine::fuzz::Bytes in(data, size);
  CsvOptions options;
  options.header = in.flag();
  options.delimiter = in.pick(std::vector<char>{',', ';', '\t', ' ', '"'});
  options.target = in.pick(std::vector<std::string>{"", "label", "c", "1", "3", "missing"});
  options.class_target = in.flag();
  if (in.flag()) options.numeric = column_names(in);
  if (in.flag()) options.categorical = column_names(in);
  options.missing = in.pick(std::vector<MissingValues>{MissingValues::kError, MissingValues::kFill,
                                                       MissingValues::kSkip});
  options.skip_bad = in.flag();
  const size_t split = static_cast<size_t>(in.in_range(0, 255));
  const std::string text = in.rest();
  const std::string train_text = text.substr(0, std::min(split * 4, text.size()));
  const std::string predict_text = text.substr(train_text.size());

  (void)parse_csv(text, options.delimiter, "input.csv");
  options.path = engine::fuzz::scratch_dir() + "/train.csv";
  engine::fuzz::write_file(options.path, train_text.data(), train_text.size());
  auto source = std::make_shared<CsvSource>(options);
  if (source->size() > 0) (void)source->gather(torch::arange(std::min<int64_t>(source->size(), 3)));
  (void)source->describe();

  CsvOptions predict = options;
  predict.path = engine::fuzz::scratch_dir() + "/predict.csv";
  predict.stats = source->stats();
  engine::fuzz::write_file(predict.path, predict_text.data(), predict_text.size());
  CsvSource rows(predict);
  if (rows.size() > 0) (void)rows.gather(torch::arange(rows.size() - 1, rows.size()));
}
