// A benchmark sweep as DLBS defines one, in plain C++ values: constants (`parameters`), lists
// crossed as a Cartesian product (`variables`, loops in `order`), and `extensions` applied one
// after another, each to the points the earlier ones made. The Lua layer reads a sweep script
// into a SweepSpec; Lua functions (computed parameters, predicates) arrive as std::functions.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/bench/value.hpp"

namespace engine::bench {

// Reads a parameter of the point being expanded (computing it if it is computed); throws a
// UsageError for a name that is not a parameter.
using Getter = std::function<Value(const std::string& name)>;

// A parameter as the script writes it: a value, or a function of the point (DLBS's ${...}).
struct Param {
  Value value;
  std::function<Value(const Getter&)> compute;  // set for a computed parameter

  Param() = default;
  Param(Value v) : value(std::move(v)) {}  // NOLINT: a value is a parameter
};
using Params = std::map<std::string, Param>;

// What one key of a condition asks of the point's value.
struct Test {
  enum class Kind { kEquals, kAnyOf, kPattern, kMatch, kPredicate };
  Kind kind = Kind::kEquals;
  std::vector<Value> values;  // kEquals: one; kAnyOf: the accepted ones
  // kPattern: an ECMAScript regular expression searched anywhere in the value's text; kMatch:
  // one matched from the text's start, as DLBS's string conditions (Python's re.match), its
  // captures kept in the point as _match_<key>_<n> (DLBS's ${__condition.<key>_<n>}).
  std::string pattern;
  std::function<bool(const Value&, const Getter&)> predicate;  // kPredicate
};

struct Extension {
  std::map<std::string, Test> condition;    // every key must match (none: every point)
  std::function<bool(const Getter&)> when;  // condition = function(point): the whole point
  Params parameters;                        // merged into a matching point, replacing
  std::vector<Params> cases;                // non-empty: a matching point becomes one per case
};

struct SweepSpec {
  std::string name;
  std::string description;  // the script's, written to the benchmark file
  Params parameters;
  std::map<std::string, std::vector<Value>> variables;
  std::vector<std::string> order;  // outermost loop first; variables it leaves out follow, by name
  std::vector<Extension> extensions;
  std::function<bool(const Getter&)> where;  // false: the point is inactive
  // The parameters that make a point's out-of-memory family: a batch that ran out of memory
  // skips the larger batches of the points that agree on these. Empty: kDefaultOomFamily.
  std::vector<std::string> oom_family;
  // Where a key is written in the script, for messages: " (cnn.lua:14)", or "". section is
  // "parameters", "variables", "order", "where" or "extensions[i]" (1-based).
  std::function<std::string(const std::string& section, const std::string& key)> locate;
};

// Command-line changes to a sweep: --set k=v (on a variable: the variable reduced to that one
// value; otherwise the parameter set everywhere, after the extensions) and --var k=a,b,c (the
// variable's values, a new variable looping innermost).
// DLBS's -P and -V (its experimenter.py) keep DLBS's precedence: -P name=value goes into the
// sweep's parameters, so a variable of that name still loops and extensions still win over it;
// -V name=[a, b] replaces or adds a variable (a new one loops innermost), applied before -P.
struct Overrides {
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::pair<std::string, std::string>> var;
  std::vector<std::pair<std::string, Value>> dlbs_params;
  std::vector<std::pair<std::string, std::vector<Value>>> dlbs_vars;
};
// Parses "k=v" as given to --set / --var; throws a UsageError naming the flag.
std::pair<std::string, std::string> split_assignment(const std::string& text, const char* flag);

struct PlannedPoint {
  Point params;         // every parameter, resolved
  std::string made_by;  // "variables", or the extension that last changed it: "extensions[2]"
  bool active = true;
  std::string inactive_reason;  // "enabled = false (extensions[2])", "where"
  std::string id;               // point_id(params)
  // A DLBS config's point: its experiment, every DLBS parameter computed, as a JSON object
  // (dlbs_points.hpp), for DLBS's log of the point.
  std::string dlbs_experiment;
};

// What a sweep may name: every parameter with its default. Names starting with '_' are the
// script's own (labels, intermediates): allowed anywhere, never passed to a point's run.
using Schema = std::map<std::string, Value>;

// The points of a sweep, in run order. Throws a UsageError naming the key and where it is
// written for: a parameter, variable, order entry or condition key the schema does not have,
// a variable with no values, an order naming no variable, a computed parameter that fails or
// depends on itself, two active points that are the same (naming what made them), and a sweep
// with no point or no active point. `enabled` (a boolean parameter, true by default) and the
// sweep's `where` make points inactive: they are listed, not run.
std::vector<PlannedPoint> expand(SweepSpec spec, const Schema& schema,
                                 const Overrides& overrides = {});

// A point's identity across runs of a sweep: a hash of its parameters (all but `enabled`),
// 16 hex digits.
std::string point_id(const Point& params);
// The parameters of the out-of-memory family when a sweep names none: what decides how much
// memory a batch takes, not what only changes how long it runs (num_batches, seed, ...).
inline const std::vector<std::string> kDefaultOomFamily = {"model", "phase", "device", "dtype",
                                                           "world_size"};
// The sweep's family (its oom_family, else the default).
std::vector<std::string> oom_family(const SweepSpec& spec);
// A hash of the point's values of `family`: the points whose batches one out-of-memory failure
// rules out above its own.
std::string batch_family_id(const Point& params, const std::vector<std::string>& family);

}  // namespace engine::bench
