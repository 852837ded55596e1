#include <doctest/doctest.h>

#include <filesystem>

#include "engine/core/errors.hpp"
#include "engine/data/cifar.hpp"
#include "engine/data/csv_reader.hpp"
#include "engine/data/hdf5_source.hpp"
#include "engine/data/loader.hpp"
#include "engine/data/tabular.hpp"
#include "engine/io/hdf5.hpp"
#include "engine/io/tensor_archive.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

// `count` CIFAR records: label bytes then 3072 pixels, pixel p of record r = (r + p) % 256.
std::vector<uint8_t> cifar_records(int count, const std::vector<uint8_t>& labels_per_record,
                                   int label_bytes) {
  std::vector<uint8_t> out;
  for (int r = 0; r < count; ++r) {
    for (int b = 0; b < label_bytes; ++b) out.push_back(labels_per_record[r * label_bytes + b]);
    for (int p = 0; p < 3072; ++p) out.push_back(static_cast<uint8_t>((r + p) % 256));
  }
  return out;
}

void write_text(const std::string& path, const std::string& text) {
  test::write_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

data::CsvOptions csv_options(const std::string& path) {
  data::CsvOptions o;
  o.path = path;
  o.target = "label";
  return o;
}

}  // namespace

TEST_CASE("CIFAR-10 reads the five training batches and the test batch") {
  const auto root = test::scratch_dir("cifar10");
  const auto dir = root + "/cifar-10-batches-bin";
  std::filesystem::create_directories(dir);
  for (int b = 1; b <= 5; ++b) {
    test::write_bytes(dir + "/data_batch_" + std::to_string(b) + ".bin",
                      cifar_records(2, {static_cast<uint8_t>(b), 9}, 1));
  }
  test::write_bytes(dir + "/test_batch.bin", cifar_records(3, {0, 1, 2}, 1));
  auto train = data::load_cifar10(root, "train");
  CHECK(train->size() == 10);
  CHECK(train->target().equal(torch::tensor({1, 9, 2, 9, 3, 9, 4, 9, 5, 9}, torch::kInt64)));
  auto batch = train->gather(torch::tensor({1}, torch::kInt64));
  CHECK((batch.input.sizes() == torch::IntArrayRef{1, 3, 32, 32}));
  // pixel 1 of record 1 is 2, scaled to [0, 1]
  CHECK(batch.input[0][0][0][1].item<float>() == doctest::Approx(2.0 / 255));
  CHECK(data::load_cifar10(dir, "test")->size() == 3);

  // truncated file, bad label, missing batch
  test::write_bytes(dir + "/test_batch.bin", std::vector<uint8_t>(3073 + 100, 0));
  CHECK_THROWS_WITH_AS(data::load_cifar10(root, "test"),
                       doctest::Contains((dir + "/test_batch.bin: 3173 bytes").c_str()),
                       core::DataError);
  test::write_bytes(dir + "/test_batch.bin", cifar_records(2, {0, 12}, 1));
  CHECK_THROWS_WITH_AS(data::load_cifar10(root, "test"), doctest::Contains("record 2 has label 12"),
                       core::DataError);
  std::filesystem::remove(dir + "/data_batch_4.bin");
  CHECK_THROWS_WITH_AS(data::load_cifar10(root, "train"), doctest::Contains("data_batch_4.bin"),
                       core::DataError);
  CHECK_THROWS_AS(data::load_cifar10(root, "validation"), core::UsageError);
  CHECK_THROWS_WITH_AS(data::load_cifar10(root + "/nothing", "test"),
                       doctest::Contains("test_batch.bin not found"), core::DataError);
}

TEST_CASE("CIFAR-100 has fine and coarse labels") {
  const auto dir = test::scratch_dir("cifar100");
  test::write_bytes(dir + "/train.bin", cifar_records(2, {3, 99, 19, 0}, 2));
  CHECK(data::load_cifar100(dir, "train", "fine")
            ->target()
            .equal(torch::tensor({99, 0}, torch::kInt64)));
  CHECK(data::load_cifar100(dir, "train", "coarse")
            ->target()
            .equal(torch::tensor({3, 19}, torch::kInt64)));
  CHECK_THROWS_AS(data::load_cifar100(dir, "train", "medium"), core::UsageError);
  CHECK_THROWS_AS(data::load_cifar100(dir, "test", "fine"), core::DataError);
}

TEST_CASE("the CSV reader handles quotes, doubled quotes, line breaks in quotes and CRLF") {
  const auto rows = data::parse_csv("a, b ,c\r\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n\n1,,3",
                                    ',', "t.csv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].fields == std::vector<std::string>{"a", "b", "c"});
  CHECK(rows[1].fields == std::vector<std::string>{"x, y", "say \"hi\"", "two\nlines"});
  CHECK(rows[2].line == 5);
  CHECK(rows[2].fields == std::vector<std::string>{"1", "", "3"});
  CHECK_THROWS_WITH_AS(data::parse_csv("a\n\"open", ',', "t.csv"),
                       doctest::Contains("t.csv:2: a quoted field is never closed"),
                       core::DataError);
}

TEST_CASE("a CSV file's byte order mark is not part of its first column's name; a folder says so") {
  const auto dir = test::scratch_dir("csv-bom");
  const std::string path = dir + "/bom.csv";
  test::write_bytes(path, {0xEF, 0xBB, 0xBF, 'y', ',', 'x', '\n', '1', ',', '2', '\n'});
  const auto rows = data::read_csv(path, ',');
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].fields == std::vector<std::string>{"y", "x"});
  // a folder where a file was expected: said, not a huge allocation (std::bad_alloc, exit 7)
  CHECK_THROWS_WITH_AS(data::read_csv(dir, ','), (dir + ": is a folder, not a file").c_str(),
                       core::DataError);
}

TEST_CASE("CSV: numeric columns standardised, categories through the training vocabulary") {
  const auto dir = test::scratch_dir("csv");
  write_text(dir + "/train.csv",
             "age,city,label\n20,paris,yes\n30,rome,no\n40,paris,yes\n50,oslo,no\n");
  write_text(dir + "/test.csv", "age,city,label\n35,lima,no\n35,rome,yes\n");
  data::CsvSource train(csv_options(dir + "/train.csv"));
  const auto& stats = *train.stats();
  REQUIRE(stats.numeric.size() == 1);
  CHECK(stats.numeric[0].name == "age");
  CHECK(stats.numeric[0].mean == doctest::Approx(35));
  CHECK(stats.numeric[0].std == doctest::Approx(std::sqrt(125.0)));
  REQUIRE(stats.categorical.size() == 1);
  CHECK(stats.categorical[0].values == std::vector<std::string>{"oslo", "paris", "rome"});
  CHECK(stats.classes == std::vector<std::string>{"no", "yes"});
  auto b = train.gather(torch::arange(4, torch::kInt64));
  CHECK((b.input.sizes() == torch::IntArrayRef{4, 1}));
  CHECK(b.input.mean().item<float>() == doctest::Approx(0).epsilon(1e-6));
  CHECK(b.categorical.view(-1).equal(torch::tensor({1, 2, 1, 0}, torch::kInt64)));
  CHECK(b.target.equal(torch::tensor({1, 0, 1, 0}, torch::kInt64)));

  // the test split uses the training statistics; an unseen city is out of vocabulary (3)
  auto o = csv_options(dir + "/test.csv");
  o.stats = train.stats();
  data::CsvSource test(o);
  auto t = test.gather(torch::arange(2, torch::kInt64));
  CHECK(t.input[0][0].item<float>() == doctest::Approx(0));
  CHECK(t.categorical.view(-1).equal(torch::tensor({3, 2}, torch::kInt64)));
  CHECK(t.target.equal(torch::tensor({0, 1}, torch::kInt64)));
}

TEST_CASE("CSV: column roles are inferred, numbers sort numerically, float targets work") {
  const auto dir = test::scratch_dir("csv-infer");
  write_text(dir + "/d.csv", "x;kind;label\n1.5;a;10\n2.5;b;2\n3.5;a;2\n");
  auto o = csv_options(dir + "/d.csv");
  o.delimiter = ';';
  data::CsvSource s(o);
  CHECK(s.stats()->numeric.size() == 1);
  CHECK(s.stats()->categorical[0].name == "kind");
  CHECK(s.stats()->classes == std::vector<std::string>{"2", "10"});
  o.class_target = false;
  data::CsvSource regression(o);
  CHECK(regression.gather(torch::arange(3, torch::kInt64))
            .target.equal(torch::tensor({10.f, 2.f, 2.f})));
  // no header: columns are named 1, 2, 3
  write_text(dir + "/n.csv", "1,2,0\n3,4,1\n");
  data::CsvOptions n;
  n.path = dir + "/n.csv";
  n.header = false;
  n.target = "3";
  data::CsvSource numbered(n);
  CHECK(numbered.stats()->numeric.size() == 2);
  CHECK(numbered.size() == 2);
}

TEST_CASE("CSV: bad rows and missing values name the file and line, or are skipped and counted") {
  const auto dir = test::scratch_dir("csv-bad");
  write_text(dir + "/bad.csv", "age,city,label\n20,paris,yes\n30,rome\n40,paris,no\n");
  CHECK_THROWS_WITH_AS(data::CsvSource(csv_options(dir + "/bad.csv")),
                       doctest::Contains((dir + "/bad.csv:3: 2 fields, expected 3").c_str()),
                       core::DataError);
  write_text(dir + "/text.csv", "age,city,label\n20,paris,yes\nold,rome,no\n");
  auto o = csv_options(dir + "/text.csv");
  o.numeric = std::vector<std::string>{"age"};
  o.categorical = std::vector<std::string>{"city"};
  CHECK_THROWS_WITH_AS(data::CsvSource{o},
                       doctest::Contains(":3: column 'age': 'old' is not a number"),
                       core::DataError);
  o.skip_bad = true;
  data::CsvSource skipping(o);
  CHECK(skipping.size() == 1);
  CHECK(skipping.skipped_at_load() == 1);

  write_text(dir + "/na.csv", "age,city,label\n20,paris,yes\nNA,?,no\n40,rome,no\n");
  CHECK_THROWS_WITH_AS(data::CsvSource(csv_options(dir + "/na.csv")),
                       doctest::Contains(":3: column 'age' is missing"), core::DataError);
  auto fill = csv_options(dir + "/na.csv");
  fill.missing = data::MissingValues::kFill;
  data::CsvSource filled(fill);
  CHECK(filled.size() == 3);
  auto b = filled.gather(torch::tensor({1}, torch::kInt64));
  CHECK(b.input[0][0].item<float>() == 0);          // the training mean
  CHECK(b.categorical[0][0].item<int64_t>() == 2);  // out of vocabulary: {paris, rome}
  CHECK(filled.stats()->numeric[0].mean == doctest::Approx(30));  // mean of present values
  auto skip = csv_options(dir + "/na.csv");
  skip.missing = data::MissingValues::kSkip;
  data::CsvSource skipped(skip);
  CHECK(skipped.size() == 2);
  CHECK(skipped.skipped_at_load() == 1);

  auto missing_column = csv_options(dir + "/na.csv");
  missing_column.numeric = std::vector<std::string>{"height"};
  CHECK_THROWS_WITH_AS(data::CsvSource{missing_column},
                       doctest::Contains("no column 'height' (numeric); the columns are: age"),
                       core::DataError);
  write_text(dir + "/empty.csv", "");
  CHECK_THROWS_WITH_AS(data::CsvSource(csv_options(dir + "/empty.csv")),
                       doctest::Contains("empty CSV file"), core::DataError);
  CHECK_THROWS_AS(data::CsvSource(csv_options(dir + "/absent.csv")), core::IoError);
  // a class the training split never had
  write_text(dir + "/train.csv", "age,label\n1,a\n2,b\n");
  write_text(dir + "/other.csv", "age,label\n1,c\n");
  auto other = csv_options(dir + "/other.csv");
  other.stats = data::CsvSource(csv_options(dir + "/train.csv")).stats();
  CHECK_THROWS_WITH_AS(data::CsvSource{other}, doctest::Contains("class 'c'"), core::DataError);
}

TEST_CASE("CSV: every spelling of an infinity or a NaN is refused, or missing where na says so") {
  const auto dir = test::scratch_dir("csv-nonfinite");
  // inferred roles: a column that is numbers but for one infinity stays numeric, and is refused
  for (const std::string field : {"inf", "-inf", "Infinity", "-INF", "nan(1)", "NaN(0x7)"}) {
    write_text(dir + "/x.csv", "age,label\n20,yes\n" + field + ",no\n40,no\n");
    CHECK_THROWS_WITH_AS(
        data::CsvSource(csv_options(dir + "/x.csv")),
        doctest::Contains((":3: column 'age': '" + field + "' is not a finite number").c_str()),
        core::DataError);
    // a float target too
    write_text(dir + "/t.csv", "age,label\n20,1.5\n30," + field + "\n");
    auto regression = csv_options(dir + "/t.csv");
    regression.class_target = false;
    CHECK_THROWS_WITH_AS(
        data::CsvSource{regression},
        doctest::Contains(
            (":3: the target 'label': '" + field + "' is not a finite number").c_str()),
        core::DataError);
  }
  // pandas' NaN markers are missing values: missing = 'error' names them, 'fill' fills them
  for (const std::string field : {"NaN", "nan", "NAN", "-nan", "<NA>", "#N/A"}) {
    write_text(dir + "/m.csv", "age,label\n20,yes\n" + field + ",no\n40,no\n");
    CHECK_THROWS_WITH_AS(data::CsvSource(csv_options(dir + "/m.csv")),
                         doctest::Contains(":3: column 'age' is missing"), core::DataError);
    auto fill = csv_options(dir + "/m.csv");
    fill.missing = data::MissingValues::kFill;
    CHECK(
        data::CsvSource(fill).gather(torch::tensor({1}, torch::kInt64)).input[0][0].item<float>() ==
        0);
  }
  // a spelling the file uses for missing values, given in na, is read as missing
  write_text(dir + "/own.csv", "age,label\n20,yes\ninf,no\n40,no\n");
  auto own = csv_options(dir + "/own.csv");
  own.na = {"inf"};
  own.missing = data::MissingValues::kSkip;
  CHECK(data::CsvSource(own).size() == 2);
}

TEST_CASE("HDF5: rows of chunked, compressed datasets, in any order, larger files than a chunk") {
  const auto dir = test::scratch_dir("hdf5");
  const auto path = dir + "/d.h5";
  const int64_t n = 1000;
  {
    auto file = io::h5::create_file(path, true);
    // x: n x 2 x 3 float32, chunked by 64 rows and deflated, as a large dataset would be
    const hsize_t dims[3] = {static_cast<hsize_t>(n), 2, 3}, chunk[3] = {64, 2, 3};
    io::h5::Handle space(H5Screate_simple(3, dims, nullptr), H5Sclose, "space");
    io::h5::Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "props");
    H5Pset_chunk(props.get(), 3, chunk);
    H5Pset_deflate(props.get(), 4);
    io::h5::Handle x(H5Dcreate2(file.get(), "x", H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                                props.get(), H5P_DEFAULT),
                     H5Dclose, "x");
    auto values = torch::arange(n * 6, torch::kFloat32);
    H5Dwrite(x.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data_ptr());
    io::h5::Handle group(H5Gcreate2(file.get(), "labels", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         H5Gclose, "group");
    io::write_tensor(group.get(), "y", torch::arange(n, torch::kInt64).remainder(7));
    io::write_tensor(file.get(), "short", torch::zeros({5}, torch::kInt64));
  }
  data::Hdf5Source source(path, "/x", "/labels/y");
  CHECK(source.size() == n);
  auto b = source.gather(torch::tensor({999, 3, 64, 3, 0}, torch::kInt64));
  CHECK((b.input.sizes() == torch::IntArrayRef{5, 2, 3}));
  CHECK(b.input.select(1, 0).select(1, 0).equal(torch::tensor({5994.f, 18.f, 384.f, 18.f, 0.f})));
  CHECK(b.target.equal(torch::tensor({999 % 7, 3, 64 % 7, 3, 0}, torch::kInt64)));

  // through the loader, shuffled, with several workers: every row once
  data::Pipeline p(std::make_shared<data::Hdf5Source>(path, "/x", "/labels/y"));
  data::EpochReader reader(p.shuffle().batch(100).workers(2), 1, 0);
  int64_t rows = 0;
  double sum = 0;
  while (auto batch = reader.next()) {
    rows += batch->size();
    sum += batch->input.select(1, 0).select(1, 0).sum().item<double>();
  }
  CHECK(rows == n);
  CHECK(sum == doctest::Approx(6.0 * n * (n - 1) / 2));

  CHECK_THROWS_WITH_AS(data::Hdf5Source(path, "/nope", ""),
                       doctest::Contains((path + ": no dataset '/nope'").c_str()), core::DataError);
  CHECK_THROWS_WITH_AS(data::Hdf5Source(path, "/x", "/labels/z/w"),
                       doctest::Contains("no dataset '/labels/z/w'"), core::DataError);
  CHECK_THROWS_WITH_AS(data::Hdf5Source(path, "/x", "/short"),
                       doctest::Contains(("5 rows but " + path + ":/x has 1000").c_str()),
                       core::DataError);
  CHECK_THROWS_WITH_AS(data::Hdf5Source(dir + "/absent.h5", "/x", ""),
                       doctest::Contains("does not exist"), core::DataError);
  write_text(dir + "/fake.h5", "not hdf5 at all");
  CHECK_THROWS_WITH_AS(data::Hdf5Source(dir + "/fake.h5", "/x", ""),
                       doctest::Contains("is not an HDF5 file"), core::DataError);
  // a file cut short
  {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(in), {});
    bytes.resize(bytes.size() / 2);
    test::write_bytes(dir + "/cut.h5", bytes);
  }
  const auto read_cut = [&] {
    data::Hdf5Source cut(dir + "/cut.h5", "/x", "/labels/y");
    cut.gather(torch::arange(n, torch::kInt64));
  };
  CHECK_THROWS_AS(read_cut(), core::DataError);
}

TEST_CASE("CSV: the source saves its statistics and reads new rows with them, target optional") {
  const auto dir = test::scratch_dir("csv-state");
  write_text(dir + "/train.csv",
             "age,city,label\n20,paris,yes\n30,rome,no\n40,paris,yes\n50,oslo,no\n");
  write_text(dir + "/other.csv", "age,city,label\n1,oslo,yes\n2,lima,yes\n");
  write_text(dir + "/new.csv", "age,city\n35,rome\n");
  data::CsvSource train(csv_options(dir + "/train.csv"));
  CHECK(train.class_names() == std::vector<std::string>{"no", "yes"});
  {
    auto file = io::h5::create_file(dir + "/state.h5", true);
    train.save_state(io::h5::create_group(file.get(), "data"));
  }
  // a source over other rows predicts with the saved statistics, not its own
  data::CsvSource other(csv_options(dir + "/other.csv"));
  auto file = io::h5::open_file(dir + "/state.h5", false);
  const auto saved = io::h5::open_group(file.get(), "data");
  const auto fresh = other.prediction_source(dir + "/new.csv", saved);
  auto b = fresh->gather(torch::arange(1, torch::kInt64));
  CHECK_FALSE(b.target.defined());                           // new.csv has no label column
  CHECK(b.input[0][0].item<float>() == doctest::Approx(0));  // (35 - 35) / std
  CHECK(b.categorical.view(-1).equal(torch::tensor({2}, torch::kInt64)));  // rome in train's
  CHECK(fresh->class_names() == std::vector<std::string>{"no", "yes"});
  // without saved state (an older checkpoint): the source's own statistics
  const auto own = train.prediction_source(dir + "/other.csv", io::h5::Handle());
  CHECK(own->gather(torch::arange(2, torch::kInt64)).target.equal(torch::tensor({1, 1})));
}

TEST_CASE("prediction_source: images for image samples; other sources say what they read") {
  const auto dir = test::scratch_dir("predict-input");
  data::TensorSource numbers(torch::randn({4, 3}), torch::zeros({4}, torch::kInt64), "numbers");
  CHECK_THROWS_WITH_AS(numbers.prediction_source(dir + "/x.csv", io::h5::Handle()),
                       doctest::Contains("this script's data is numbers (4 samples"),
                       core::UsageError);
  data::TensorSource images(torch::zeros({2, 1, 4, 4}, torch::kUInt8), torch::Tensor(), "digits");
  write_text(dir + "/list.csv", "name\nx.png\n");
  CHECK_THROWS_WITH_AS(images.prediction_source(dir + "/list.csv", io::h5::Handle()),
                       doctest::Contains("list.csv: needs a 'path' column"), core::DataError);
  CHECK(numbers.class_names().empty());
}

TEST_CASE("CSV: a damaged saved state is a DataError, not a crash") {
  const auto dir = test::scratch_dir("csv-damaged");
  write_text(dir + "/train.csv", "age,label\n1,a\n2,b\n");
  data::CsvSource train(csv_options(dir + "/train.csv"));
  {
    auto file = io::h5::create_file(dir + "/bad.h5", true);
    auto data_group = io::h5::create_group(file.get(), "data");
    auto stats = io::h5::create_group(data_group.get(), "train_stats");
    io::h5::write_attribute(stats.get(), "numeric", std::string("not a list"));
  }
  auto file = io::h5::open_file(dir + "/bad.h5", false);
  CHECK_THROWS_WITH_AS(
      train.prediction_source(dir + "/train.csv", io::h5::open_group(file.get(), "data")),
      doctest::Contains("the checkpoint's /data/train_stats cannot be read"), core::DataError);
}
