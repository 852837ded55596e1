// One row of a benchmark file: a point's results. The row's fields are declared once, in
// bench_fields(): that table makes the /results column type, the attributes of /points/<point>,
// the reading back, and the figures of `engine bench --json` (HDF5_SCHEMA.md).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/core/statuses.hpp"
#include "engine/io/hdf5.hpp"

namespace engine::io {

// One row of /results (and the attributes of /points/<point>).
struct BenchRow {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  int64_t point = 0;         // /points/<point>, counting from 0
  std::string point_id;      // hash of the point's parameters
  std::string batch_family;  // the same hash without batch_size
  std::string model, phase, device, dtype;
  int64_t batch_size = 0, world_size = 1, threads = 0, num_batches = 0;
  core::PointStatus status = core::PointStatus::kFailed;  // set before the row is written
  std::string reason;      // why it is not ok: the error's first line, the skip's cause
  std::string error_kind;  // oom | error | crash | timeout, or empty
  double mean_ms = kNone, std_ms = kNone, p50_ms = kNone, p90_ms = kNone, p99_ms = kNone;
  double throughput = kNone, throughput_p50 = kNone;  // samples/s from the mean, from p50
  // A batch's mean with no wait between batches (bench::time_pipelined; on the CPU the mean),
  // and the samples/s it gives (the world's, for a data-parallel point).
  double pipelined_ms = kNone, throughput_pipelined = kNone;
  // The share of its threads' time the point's process got over its timed batches (CPU
  // points: CPU time / (wall time x threads)); starved below kStarvedShare: its times are the
  // machine's load, not the engine's (comparisons leave it out)
  double cpu_share = kNone;
  bool starved = false;
  static constexpr double kStarvedShare = 0.5;
  // A data-parallel point (world_size > 1): throughput is the world's, summed over the ranks;
  // per rank, throughput / world_size; the efficiency against the same point on one process
  // (docs/benchmarks.md), NaN where the sweep has no such point.
  double throughput_per_rank = kNone, scaling_efficiency = kNone;
  // The mean milliseconds of each part of a batch, where the phase has parts (none: NaN).
  double data_ms = kNone, forward_ms = kNone, backward_ms = kNone, optimizer_ms = kNone;
  int64_t peak_resident_bytes = 0;
  int64_t peak_device_bytes = 0;  // CUDA memory allocated at the peak; 0 on CPU
  int64_t repeats = 0;            // processes the point ran in
  double p50_spread = kNone;      // (max - min) / median of the repeats' p50s
  bool unstable = false;          // p50_spread over the sweep's limit
  std::string label;
};

// One field of BenchRow: its name in the file, where it is in the row, whether it is a column
// of /results (every field is an attribute of /points/<point>), and its key and decimals in
// engine bench --json's line (none: not there).
struct BenchField {
  using Member = std::variant<int64_t BenchRow::*, double BenchRow::*, std::string BenchRow::*,
                              bool BenchRow::*, core::PointStatus BenchRow::*>;
  const char* name;
  Member member;
  bool in_results = true;
  const char* json = nullptr;
  int decimals = 4;
};

// Every field, in the order of the /results columns.
const std::vector<BenchField>& bench_fields();

// The /results record type, and one row packed in it (its strings point into the row, which
// must outlive the record).
h5::Handle results_type();
std::vector<unsigned char> results_record(const BenchRow& row);

// The row as the attributes of /points/<point>, and back. A field the attributes lack keeps
// BenchRow's default; a status that is none of the known ones is a DataError.
std::map<std::string, h5::Attribute> row_attributes(const BenchRow& row);
BenchRow row_from(const std::map<std::string, h5::Attribute>& attributes);

// A figure for JSON rounded to `decimals`; nullopt (null) for NaN, a part not measured.
std::optional<double> json_figure(double value, int decimals = 4);

// One value of engine bench --json's line: null, a count, a figure or a text. Plain types, not
// a JSON library's: the line is assembled in engine/cli, which a CUDA build may compile against
// another copy of nlohmann-json than this library (another ABI tag, symbols that do not link).
using JsonValue = std::variant<std::monostate, int64_t, double, std::string>;
// The row's fields in that line, in the table's order; NaN figures are null.
std::vector<std::pair<std::string, JsonValue>> json_fields(const BenchRow& row);

}  // namespace engine::io
