#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "engine/bench/repeats.hpp"

using namespace engine;

namespace {

io::BenchPoint repeat_of(std::vector<double> batch_ms, double p50_ms) {
  io::BenchPoint point;
  point.row.status = core::PointStatus::kOk;
  point.row.batch_size = 10;
  point.row.p50_ms = p50_ms;
  point.row.peak_resident_bytes = static_cast<int64_t>(batch_ms.size()) * 100;
  point.batch_ms = std::move(batch_ms);
  point.part_ms["forward"] = std::vector<double>(point.batch_ms.size(), 1.0);
  return point;
}

}  // namespace

TEST_CASE("repeats merge every batch and the spread of their medians") {
  bench::Repeats repeats(0.05);
  repeats.add(repeat_of({1.0, 2.0, 3.0}, 2.0));
  repeats.add(repeat_of({2.0, 3.0, 4.0}, 3.0));
  const auto merged = repeats.merged();
  CHECK(merged.batch_ms == std::vector<double>{1, 2, 3, 2, 3, 4});
  CHECK(merged.batch_repeat == std::vector<int64_t>{0, 0, 0, 1, 1, 1});
  CHECK(merged.part_ms.at("forward").size() == 6);
  CHECK(merged.row.repeats == 2);
  CHECK(merged.row.num_batches == 6);
  CHECK(merged.row.p50_spread == doctest::Approx(1.0 / 3.0));  // (3 - 2) / 3
  CHECK(merged.row.unstable);
  CHECK(std::get<std::string>(merged.details.at("repeat_p50_ms")) == "2, 3");
}

TEST_CASE("a stored point's repeats are taken up again: the same as running them all at once") {
  bench::Repeats at_once(0.05);
  at_once.add(repeat_of({1.0, 2.0, 3.0}, 2.0));
  at_once.add(repeat_of({2.0, 3.0, 4.0}, 3.0));
  at_once.add(repeat_of({2.0, 2.5, 3.0}, 2.5));

  bench::Repeats first_two(0.05);
  first_two.add(repeat_of({1.0, 2.0, 3.0}, 2.0));
  first_two.add(repeat_of({2.0, 3.0, 4.0}, 3.0));
  bench::Repeats topped_up(0.05);
  topped_up.add_stored(first_two.merged());
  CHECK(topped_up.count() == 2);
  topped_up.add(repeat_of({2.0, 2.5, 3.0}, 2.5));

  const auto a = at_once.merged(), b = topped_up.merged();
  CHECK(b.batch_ms == a.batch_ms);
  CHECK(b.batch_repeat == a.batch_repeat);
  CHECK(b.part_ms.at("forward") == a.part_ms.at("forward"));
  CHECK(b.row.repeats == 3);
  CHECK(b.row.mean_ms == doctest::Approx(a.row.mean_ms));
  CHECK(b.row.p50_spread == doctest::Approx(a.row.p50_spread));
  CHECK(b.details.at("repeat_p50_ms") == a.details.at("repeat_p50_ms"));
  CHECK(b.row.peak_resident_bytes == 300);
}

TEST_CASE("a point stored before batch_repeat was recorded counts as one repeat") {
  auto old = repeat_of({1.0, 2.0, 3.0}, 2.0);
  old.batch_repeat.clear();
  bench::Repeats repeats(0.05);
  repeats.add_stored(old);
  CHECK(repeats.count() == 1);
  repeats.add(repeat_of({1.0, 2.0, 3.0}, 2.0));
  CHECK(repeats.merged().row.repeats == 2);
  CHECK(repeats.merged().row.p50_spread == doctest::Approx(0.0));
}
