// Benchmark points as DLBS's benchmark records (docs/coming-from.md, "Reading the engine's
// results with DLBS's tools"): the `{"data": [...]}` document DLBS's log parser writes
// (`bench_data.py parse ... --output results.json`) and its report, summary and time-analysis
// tools read, one record per point with DLBS's keys and units.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/io/bench_file.hpp"

namespace engine::report {

// DLBS's key of each point parameter that has one (batch_size -> exp.replica_batch); the
// others go under engine.<name>. The caller passes the benchmark layer's table.
using DlbsNames = std::map<std::string, std::string>;

// DLBS's title of a zoo model it also has (resnet50 -> ResNet50), or the model's own name.
std::string dlbs_model_title(const std::string& model);

// The document: {"data": [one record per point of every file, in file and point order]}.
// A record of an ok point has results.time (mean ms of its timed batches), results.time_std
// (NumPy's std, over n), results.throughput (an integer, as DLBS's PyTorch backend writes it)
// and results.time_data (every timed batch, ms); one that is not ok has results.status
// "failure" and no time, as DLBS's own failed benchmarks.
std::string dlbs_document(const std::vector<io::BenchContents>& files, const DlbsNames& names);

// DLBS's log of one point of a DLBS config, as DLBS's launcher and backends write one: a line
// `__NAME__= VALUE` (VALUE as JSON) for every parameter of its experiment (a JSON object, in
// its order), then the record's other keys (results.*, what the engine measured) and exp.status,
// so that DLBS's log parser (`bench_data.py parse`, logparser.py) finds the point in a folder of
// logs.
std::string dlbs_log(const std::string& experiment, const io::BenchContents& file,
                     const io::BenchPoint& point, const DlbsNames& names);

}  // namespace engine::report
