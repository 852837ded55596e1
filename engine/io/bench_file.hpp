// A benchmark file (HDF5_SCHEMA.md, "A benchmark file"): one per sweep, holding the results
// table, each point's parameters, details and timed batches, the script and the expanded plan.
// Written point by point and flushed after each, so a killed sweep loses at most the point in
// progress, and reopened to continue a sweep. A single point run in a child process writes its
// result as a file of this kind with one point, which the parent reads back.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "engine/core/disk_room.hpp"
#include "engine/core/run_lock.hpp"
#include "engine/io/bench_row.hpp"
#include "engine/io/hdf5.hpp"

namespace engine::io {

struct BenchPoint {
  BenchRow row;
  std::map<std::string, h5::Attribute> parameters;     // /points/<i>/parameters
  std::map<std::string, h5::Attribute> details;        // /points/<i>/details: machine state, loss,
                                                       // n/a settings, output tail, error text
  std::vector<double> batch_ms;                        // every timed batch of every repeat
  std::vector<int64_t> batch_repeat;                   // the repeat (from 0) each batch belongs to
  std::map<std::string, std::vector<double>> part_ms;  // /points/<i>/part_ms/<part>: each
                                                       // timed batch's data, forward, ... time
  // /points/<i>/resources/<series>: the resource monitor's samples over the point's batches
  // (seconds, cpu_percent, resident_mb, gpu_percent, gpu_memory_mb; core/resource_monitor.hpp),
  // each repeat's after the one before
  std::map<std::string, std::vector<double>> resources;
};

struct BenchInfo {
  std::string name;         // the sweep's name
  std::string description;  // the sweep script's (root attribute, when not empty)
  std::string command;
  std::string script_path, script_text;          // empty for a point from flags
  std::string plan_text;                         // the expanded plan, one point per line
  std::map<std::string, h5::Attribute> machine;  // cpu_model, cores, blas, ... (root attributes)
};

// A whole benchmark file as a reader sees it (a sweep may still be writing it): the root's
// attributes (sweep name, status, machine) and every point with its batch times.
struct BenchContents {
  std::string path;
  std::map<std::string, h5::Attribute> attributes;
  std::vector<BenchPoint> points;
};

class BenchFile {
 public:
  // Reads a benchmark file without taking HDF5's lock (see h5::open_file_while_written).
  static BenchContents read_all(const std::string& path);
  // runs/bench/<name>/<YYYYmmdd-HHMMSS>[-<n>].h5 under root; creates the folders.
  static std::string new_path(const std::string& root, const std::string& name);
  // The newest file of a sweep under root (by name), or "" when there is none.
  static std::string latest_path(const std::string& root, const std::string& name);
  // Reads one point of a file (the result a child process wrote).
  static BenchPoint read_point(const std::string& path, int64_t index);

  // Creates the file, or opens an existing one to continue it (its points stay; the script,
  // plan and machine are replaced by these, and the reopening is recorded).
  BenchFile(const std::string& path, const BenchInfo& info);
  ~BenchFile();
  BenchFile(const BenchFile&) = delete;
  BenchFile& operator=(const BenchFile&) = delete;

  // The stored points: rows, parameters and details (not the batch arrays), by index.
  std::vector<BenchPoint> points() const;
  // One stored point with its batch arrays.
  BenchPoint point_with_batches(int64_t index) const;
  int64_t point_count() const;
  // Writes /points/<row.point> (replacing it) and its /results row, then flushes.
  void write_point(const BenchPoint& point);
  // Rewrites a stored point's row (its /results record and attributes), then flushes.
  void update_row(const BenchRow& row);
  // completed | failed | interrupted; sets finished_at (and error, when not empty) and flushes.
  // Writes go through disk room taken before each point (core::DiskRoom): a full disk is an
  // IoError before the point is written, and finish uses what is left of the room.
  void finish(core::FileStatus status, const std::string& error = {});
  const std::string& path() const { return path_; }

 private:
  void write_row(const BenchRow& row);

  std::string path_;
  // held while the file is open, taken before anything is read or written: a second sweep
  // continuing this file is refused naming this process, with HDF5's locking on or off
  core::RunLock lock_;
  core::DiskRoom room_;  // before file_: given back once the file is closed
  h5::Handle file_;
  h5::Handle points_;
};

}  // namespace engine::io
