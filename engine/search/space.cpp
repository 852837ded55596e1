#include "engine/search/space.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/core/errors.hpp"

namespace engine::search {
namespace {

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  // the shortest text that reads back as the same double
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, v);
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  return buffer;
}

// `count` points from lo to hi, both ends included (one point: lo).
std::vector<double> evenly(double lo, double hi, int64_t count) {
  std::vector<double> out;
  for (int64_t i = 0; i < count; ++i) {
    out.push_back(
        count == 1 ? lo : lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(count - 1));
  }
  return out;
}

}  // namespace

std::string hparam_text(const io::HParam& value) {
  if (const auto* d = std::get_if<double>(&value)) return number(*d);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  return std::get<std::string>(value);
}

std::string Space::describe() const {
  const std::string counted = count > 0 ? ", {count = " + std::to_string(count) + "}" : "";
  switch (kind) {
    case Kind::kConst:
      return "search.const(" + hparam_text(values.front()) + ")";
    case Kind::kChoice: {
      std::string text = "search.choice{";
      for (size_t i = 0; i < values.size(); ++i) {
        const bool word = std::holds_alternative<std::string>(values[i]);
        text += (i ? ", " : "") + std::string(word ? "'" : "") + hparam_text(values[i]) +
                (word ? "'" : "");
      }
      return text + "}";
    }
    case Kind::kInt:
      return "search.int(" + number(lo) + ", " + number(hi) + counted + ")";
    case Kind::kUniform:
      return "search.uniform(" + number(lo) + ", " + number(hi) + counted + ")";
    case Kind::kLog:
      return "search.log(" + number(lo) + ", " + number(hi) +
             (base != 10 ? ", " + number(base) : "") + counted + ")";
  }
  return "search space";
}

io::HParam Space::sample(std::mt19937_64& random) const {
  switch (kind) {
    case Kind::kConst:
      return values.front();
    case Kind::kChoice: {
      std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
      return values[pick(random)];
    }
    case Kind::kInt: {
      std::uniform_int_distribution<int64_t> pick(static_cast<int64_t>(lo),
                                                  static_cast<int64_t>(hi));
      return static_cast<double>(pick(random));
    }
    case Kind::kUniform:
      return std::uniform_real_distribution<double>(lo, hi)(random);
    case Kind::kLog: {
      const double e = std::uniform_real_distribution<double>(
          std::log(lo) / std::log(base), std::log(hi) / std::log(base))(random);
      return std::pow(base, e);
    }
  }
  return values.front();
}

std::vector<io::HParam> Space::grid(const std::string& name) const {
  std::vector<io::HParam> out;
  switch (kind) {
    case Kind::kConst:
    case Kind::kChoice:
      return values;
    case Kind::kInt: {
      const auto first = static_cast<int64_t>(lo), last = static_cast<int64_t>(hi);
      if (count == 0) {
        if (last - first >= 1000) {
          throw core::UsageError("grid search: '" + name + "' = " + describe() +
                                 " spans more than 1000 integers; give it a count");
        }
        for (int64_t i = first; i <= last; ++i) out.push_back(static_cast<double>(i));
        return out;
      }
      double previous = NAN;
      for (double v : evenly(lo, hi, count)) {
        const double rounded = std::round(v);
        if (rounded != previous) out.push_back(rounded);  // no integer twice
        previous = rounded;
      }
      return out;
    }
    case Kind::kUniform:
    case Kind::kLog: {
      if (count == 0) {
        throw core::UsageError("grid search: '" + name + "' = " + describe() +
                               " needs a count of grid points, e.g. " +
                               (kind == Kind::kLog ? "search.log(" : "search.uniform(") +
                               number(lo) + ", " + number(hi) + ", {count = 4})");
      }
      if (kind == Kind::kUniform) {
        for (double v : evenly(lo, hi, count)) out.push_back(v);
      } else {
        const double l = std::log(lo) / std::log(base), h = std::log(hi) / std::log(base);
        for (double e : evenly(l, h, count)) out.push_back(std::pow(base, e));
      }
      return out;
    }
  }
  return out;
}

std::vector<std::map<std::string, io::HParam>> SearchSpace::grid() const {
  std::vector<std::map<std::string, io::HParam>> out = {constants};
  for (const auto& [name, space] : spaces) {
    const auto values = space.grid(name);
    std::vector<std::map<std::string, io::HParam>> next;
    for (const auto& partial : out) {
      for (const auto& value : values) {
        auto combined = partial;
        combined[name] = value;
        next.push_back(std::move(combined));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::map<std::string, io::HParam> SearchSpace::sample(std::mt19937_64& random) const {
  auto out = constants;
  for (const auto& [name, space] : spaces) out[name] = space.sample(random);
  return out;
}

}  // namespace engine::search
