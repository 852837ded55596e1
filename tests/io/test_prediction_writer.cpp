#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "engine/io/csv_writer.hpp"
#include "engine/io/prediction_writer.hpp"

using namespace engine;

TEST_CASE("csv_field quotes commas, quotes and line breaks; rows join fields") {
  CHECK(io::csv_field("plain") == "plain");
  CHECK(io::csv_field("a,b") == "\"a,b\"");
  CHECK(io::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(io::csv_field("two\nlines") == "\"two\nlines\"");
  std::ostringstream out;
  io::write_csv_row(out, {"1", "x,y", ""});
  CHECK(out.str() == "1,\"x,y\",\n");
}

TEST_CASE("PredictionWriter: class outputs as CSV, with a header and softmax probabilities") {
  std::ostringstream out;
  io::PredictionWriter writer(out, io::PredictionFormat::kCsv, {"no", "yes, sure"}, true);
  const auto logits = torch::tensor({{0.0, 0.0}, {0.0, std::log(3.0)}}, torch::kFloat64);
  writer.write(torch::tensor({0, 4}), logits);
  writer.write(torch::tensor({5}), torch::tensor({{1.0, 0.0}}));
  CHECK(writer.count() == 3);
  std::istringstream lines(out.str());
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  CHECK(header == "row,prediction,probability,p_no,\"p_yes, sure\"");
  CHECK(first == "1,no,0.5,0.5,0.5");
  CHECK(second == "5,\"yes, sure\",0.75,0.25,0.75");
}

TEST_CASE("PredictionWriter: JSON lines escape labels; numbers as in CSV; other outputs as is") {
  std::ostringstream out;
  io::PredictionWriter writer(out, io::PredictionFormat::kJsonLines, {"a\"b", "c\nd"}, true);
  writer.write(torch::tensor({2}), torch::tensor({{0.0, std::log(3.0)}}, torch::kFloat64));
  const auto line = nlohmann::json::parse(out.str());
  CHECK(line["row"] == 3);
  CHECK(line["prediction"] == "c\nd");
  CHECK(line["probability"] == 0.75);
  CHECK(line["probabilities"]["a\"b"] == 0.25);
  CHECK(out.str().find("\"c\\nd\"") != std::string::npos);

  // no class names: the class is its 1-based number, a number in JSON; a path column first
  std::ostringstream numbered;
  io::PredictionWriter unnamed(numbered, io::PredictionFormat::kJsonLines, {}, true);
  unnamed.write(torch::tensor({0}), torch::tensor({{0.0, std::log(3.0)}}, torch::kFloat64),
                {"images/a.png"});
  const auto unnamed_line = nlohmann::json::parse(numbered.str());
  CHECK(unnamed_line["path"] == "images/a.png");
  CHECK(unnamed_line["prediction"] == 2);
  CHECK(unnamed_line["probabilities"]["2"] == 0.75);
  std::ostringstream csv;
  io::PredictionWriter with_paths(csv, io::PredictionFormat::kCsv, {}, true);
  with_paths.write(torch::tensor({0}), torch::tensor({{0.0, std::log(3.0)}}, torch::kFloat64),
                   {"a.png"});
  CHECK(csv.str() == "row,path,prediction,probability,p_1,p_2\n1,a.png,2,0.75,0.25,0.75\n");

  std::ostringstream values;
  io::PredictionWriter regression(values, io::PredictionFormat::kJsonLines, {}, false);
  regression.write(torch::tensor({0, 1}),
                   torch::tensor({{1.0 / 3, 2.0}, {4.0, 5.0}}, torch::kFloat64));
  CHECK(values.str() ==
        "{\"row\":1,\"prediction\":[0.333333333,2.0]}\n"
        "{\"row\":2,\"prediction\":[4.0,5.0]}\n");
  std::ostringstream single;
  io::PredictionWriter one(single, io::PredictionFormat::kCsv, {}, false);
  one.write(torch::tensor({0}), torch::tensor({2.5}));
  CHECK(single.str() == "row,prediction\n1,2.5\n");
}
