#include "engine/io/bench_row.hpp"

#include <cmath>
#include <cstring>

#include "engine/core/errors.hpp"

namespace engine::io {
namespace {

using R = BenchRow;

// Where each /results column sits in a packed record: in table order, each at its natural
// alignment (8 bytes for numbers and string pointers, 1 for a flag), as a C struct of the same
// members in the same order would be.
struct RecordLayout {
  std::vector<size_t> offsets;  // per field of bench_fields(); unused for attribute-only ones
  size_t size = 0;
};

size_t field_size(const BenchField& f) {
  return std::holds_alternative<bool R::*>(f.member) ? 1 : 8;
}

const RecordLayout& record_layout() {
  static const RecordLayout layout = [] {
    RecordLayout l;
    size_t at = 0;
    for (const auto& f : bench_fields()) {
      const size_t size = field_size(f);
      at = (at + size - 1) / size * size;
      l.offsets.push_back(at);
      if (f.in_results) at += size;
    }
    l.size = (at + 7) / 8 * 8;
    return l;
  }();
  return layout;
}

}  // namespace

std::optional<double> json_figure(double value, int decimals) {
  if (std::isnan(value)) return std::nullopt;
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

const std::vector<BenchField>& bench_fields() {
  static const std::vector<BenchField> fields = {
      {"point", &R::point},
      {"point_id", &R::point_id},
      {"batch_family", &R::batch_family, false},
      {"model", &R::model, true, "model"},
      {"phase", &R::phase, true, "phase"},
      {"device", &R::device, true, "device"},
      {"dtype", &R::dtype, true, "dtype"},
      {"batch_size", &R::batch_size, true, "batch_size"},
      {"world_size", &R::world_size, true, "world_size"},
      {"threads", &R::threads, true, "threads"},
      {"status", &R::status},
      {"reason", &R::reason},
      {"num_batches", &R::num_batches, true, "batches"},
      {"mean_ms", &R::mean_ms, true, "mean_ms"},
      {"std_ms", &R::std_ms, true, "std_ms"},
      {"p50_ms", &R::p50_ms, true, "p50_ms"},
      {"p90_ms", &R::p90_ms, true, "p90_ms"},
      {"p99_ms", &R::p99_ms, true, "p99_ms"},
      {"throughput", &R::throughput, true, "throughput", 2},
      {"throughput_p50", &R::throughput_p50, true, "throughput_p50", 2},
      {"pipelined_ms", &R::pipelined_ms, true, "pipelined_ms"},
      {"throughput_pipelined", &R::throughput_pipelined, true, "throughput_pipelined", 2},
      {"throughput_per_rank", &R::throughput_per_rank, true, "throughput_per_rank", 2},
      {"scaling_efficiency", &R::scaling_efficiency},
      {"data_ms", &R::data_ms, true, "data_ms"},
      {"forward_ms", &R::forward_ms, true, "forward_ms"},
      {"backward_ms", &R::backward_ms, true, "backward_ms"},
      {"optimizer_ms", &R::optimizer_ms, true, "optimizer_ms"},
      {"peak_resident_bytes", &R::peak_resident_bytes, true, "peak_resident_bytes"},
      {"peak_device_bytes", &R::peak_device_bytes, true, "peak_device_bytes"},
      {"repeats", &R::repeats},
      {"p50_spread", &R::p50_spread},
      {"unstable", &R::unstable},
      {"cpu_share", &R::cpu_share, true, "cpu_share", 2},
      {"starved", &R::starved, true, "starved"},
      {"error_kind", &R::error_kind},
      {"label", &R::label},
  };
  return fields;
}

h5::Handle results_type() {
  const auto& layout = record_layout();
  const auto text = h5::string_type();
  const auto flag = h5::bool_type();
  h5::Handle type(H5Tcreate(H5T_COMPOUND, layout.size), H5Tclose, "make the results type");
  const auto& fields = bench_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto& f = fields[i];
    if (!f.in_results) continue;
    const hid_t kind = std::visit(
        [&](auto member) -> hid_t {
          using T = std::remove_reference_t<decltype(std::declval<R>().*member)>;
          if constexpr (std::is_same_v<T, int64_t>) return H5T_NATIVE_INT64;
          if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
          if constexpr (std::is_same_v<T, bool>) return flag.get();
          return text.get();  // strings and the status's name
        },
        f.member);
    H5Tinsert(type.get(), f.name, layout.offsets[i], kind);
  }
  return type;
}

std::vector<unsigned char> results_record(const BenchRow& row) {
  const auto& layout = record_layout();
  std::vector<unsigned char> record(layout.size, 0);
  const auto& fields = bench_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!fields[i].in_results) continue;
    unsigned char* at = record.data() + layout.offsets[i];
    std::visit(
        [&](auto member) {
          const auto& value = row.*member;
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, bool>) {
            const int8_t flag = value ? 1 : 0;
            std::memcpy(at, &flag, 1);
          } else if constexpr (std::is_same_v<T, std::string>) {
            const char* text = value.c_str();
            std::memcpy(at, &text, sizeof text);
          } else if constexpr (std::is_same_v<T, core::PointStatus>) {
            const char* text = core::name_of(value);
            std::memcpy(at, &text, sizeof text);
          } else {
            std::memcpy(at, &value, sizeof value);
          }
        },
        fields[i].member);
  }
  return record;
}

std::map<std::string, h5::Attribute> row_attributes(const BenchRow& row) {
  std::map<std::string, h5::Attribute> out;
  for (const auto& f : bench_fields()) {
    std::visit(
        [&](auto member) {
          const auto& value = row.*member;
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, core::PointStatus>) {
            out[f.name] = std::string(core::name_of(value));
          } else {
            out[f.name] = value;
          }
        },
        f.member);
  }
  return out;
}

BenchRow row_from(const std::map<std::string, h5::Attribute>& attributes) {
  BenchRow row;
  for (const auto& f : bench_fields()) {
    const auto it = attributes.find(f.name);
    if (it == attributes.end()) continue;  // the default (a file from before the field)
    std::visit(
        [&](auto member) {
          auto& value = row.*member;
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, core::PointStatus>) {
            const auto* text = std::get_if<std::string>(&it->second);
            const auto known = text ? core::point_status(*text) : std::nullopt;
            if (!known) {
              throw core::DataError("point " + std::to_string(row.point) + " has the status '" +
                                    (text ? *text : std::string("(not text)")) +
                                    "', not one of ok, failed, timeout, skipped, inactive");
            }
            value = *known;
          } else if (const auto* stored = std::get_if<T>(&it->second)) {
            value = *stored;
          }
        },
        f.member);
  }
  return row;
}

std::vector<std::pair<std::string, JsonValue>> json_fields(const BenchRow& row) {
  std::vector<std::pair<std::string, JsonValue>> out;
  for (const auto& f : bench_fields()) {
    if (!f.json) continue;
    std::visit(
        [&](auto member) {
          const auto& value = row.*member;
          using T = std::decay_t<decltype(value)>;
          JsonValue v;
          if constexpr (std::is_same_v<T, double>) {
            if (const auto figure = json_figure(value, f.decimals)) v = *figure;
          } else if constexpr (std::is_same_v<T, core::PointStatus>) {
            v = std::string(core::name_of(value));
          } else if constexpr (std::is_same_v<T, bool>) {
            v = int64_t{value ? 1 : 0};
          } else {
            v = value;
          }
          out.emplace_back(f.json, std::move(v));
        },
        f.member);
  }
  return out;
}

}  // namespace engine::io
