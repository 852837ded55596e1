// Part of require 'data': data.csv and its training statistics (ds:stats(), ds:classes()), read
// from and handed to Lua as tables.
#include <memory>

#include "engine/core/format.hpp"
#include "engine/data/image_folder.hpp"
#include "engine/data/tabular.hpp"
#include "engine/lua/data/data_tables.hpp"

namespace engine::lua {
namespace {

// ---- data.csv and its statistics -------------------------------------------------------------

const data::CsvSource* csv_source(const data::Pipeline& p) {
  return dynamic_cast<const data::CsvSource*>(&p.source());
}

// Field `key` of the table at `index` pushed raw (no metamethod can raise here).
void push_raw_field(lua_State* L, int index, const char* key) {
  lua_pushstring(L, key);
  lua_rawget(L, index < 0 ? index - 1 : index);
}

std::string string_field(lua_State* L, int index, const char* key, const std::string& what) {
  push_raw_field(L, index, key);
  if (lua_type(L, -1) != LUA_TSTRING) {
    lua_pop(L, 1);
    throw ArgumentError(what + ": field '" + key + "' must be a string");
  }
  std::string v = lua_tostring(L, -1);
  lua_pop(L, 1);
  return v;
}

double number_field(lua_State* L, int index, const char* key, const std::string& what) {
  push_raw_field(L, index, key);
  if (lua_type(L, -1) != LUA_TNUMBER) {
    lua_pop(L, 1);
    throw ArgumentError(what + ": field '" + key + "' must be a number");
  }
  const double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

std::vector<std::string> string_list_field(lua_State* L, int index, const char* key,
                                           const std::string& what) {
  push_raw_field(L, index, key);
  std::vector<std::string> out;
  if (lua_istable(L, -1)) {
    const size_t n = lua_objlen(L, -1);
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, static_cast<int>(i));
      if (lua_type(L, -1) == LUA_TSTRING) out.push_back(lua_tostring(L, -1));
      lua_pop(L, 1);
      if (out.size() != i) break;
    }
    if (out.size() != n) {
      lua_pop(L, 1);
      throw ArgumentError(what + ": field '" + key + "' must be a list of strings");
    }
  } else if (!lua_isnil(L, -1)) {
    lua_pop(L, 1);
    throw ArgumentError(what + ": field '" + key + "' must be a list of strings");
  }
  lua_pop(L, 1);
  return out;
}

void push_string_list(lua_State* L, const std::vector<std::string>& values) {
  lua_createtable(L, static_cast<int>(values.size()), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    lua_pushstring(L, values[i].c_str());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

// The statistics as a plain Lua table, which torch.save can store and data.csv{stats = ...}
// reads back:
//   {target = 'income', target_type = 'class', classes = {...},
//    numeric = {{name = 'age', mean = 38.6, std = 13.6}, ...},
//    categorical = {{name = 'workclass', values = {...}, cardinality = 9}, ...}}
// cardinality counts the out-of-vocabulary index: the embedding size a model needs.
void push_stats(lua_State* L, const data::TabularStats& stats) {
  lua_createtable(L, 0, 5);
  lua_pushstring(L, stats.target.c_str());
  lua_setfield(L, -2, "target");
  lua_pushstring(L, stats.class_target ? "class" : "float");
  lua_setfield(L, -2, "target_type");
  push_string_list(L, stats.classes);
  lua_setfield(L, -2, "classes");
  lua_createtable(L, static_cast<int>(stats.numeric.size()), 0);
  for (size_t j = 0; j < stats.numeric.size(); ++j) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, stats.numeric[j].name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushnumber(L, stats.numeric[j].mean);
    lua_setfield(L, -2, "mean");
    lua_pushnumber(L, stats.numeric[j].std);
    lua_setfield(L, -2, "std");
    lua_rawseti(L, -2, static_cast<int>(j + 1));
  }
  lua_setfield(L, -2, "numeric");
  lua_createtable(L, static_cast<int>(stats.categorical.size()), 0);
  for (size_t j = 0; j < stats.categorical.size(); ++j) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, stats.categorical[j].name.c_str());
    lua_setfield(L, -2, "name");
    push_string_list(L, stats.categorical[j].values);
    lua_setfield(L, -2, "values");
    lua_pushnumber(L, static_cast<double>(stats.categorical[j].values.size() + 1));
    lua_setfield(L, -2, "cardinality");
    lua_rawseti(L, -2, static_cast<int>(j + 1));
  }
  lua_setfield(L, -2, "categorical");
}

// Reads statistics from a csv pipeline or from a table shaped as push_stats writes it.
std::shared_ptr<const data::TabularStats> read_stats(lua_State* L, int index) {
  const std::string what = "data.csv: option 'stats'";
  if (auto* box = test<PipelineBox>(L, index)) {
    const auto* csv = csv_source(box->pipeline);
    if (!csv) throw ArgumentError(what + " must be a data.csv pipeline or a statistics table");
    return csv->stats();
  }
  if (!lua_istable(L, index)) {
    throw ArgumentError(what + " must be a data.csv pipeline or a statistics table, got " +
                        type_name(L, index));
  }
  auto stats = std::make_shared<data::TabularStats>();
  stats->target = string_field(L, index, "target", what);
  stats->class_target = string_field(L, index, "target_type", what) == "class";
  stats->classes = string_list_field(L, index, "classes", what);
  for (const char* part : {"numeric", "categorical"}) {
    push_raw_field(L, index, part);
    const int list = lua_gettop(L);
    const size_t n = lua_istable(L, list) ? lua_objlen(L, list) : 0;
    for (size_t j = 1; j <= n; ++j) {
      lua_rawgeti(L, list, static_cast<int>(j));
      const std::string item = what + " " + part + "[" + std::to_string(j) + "]";
      if (!lua_istable(L, -1)) {
        lua_settop(L, list - 1);
        throw ArgumentError(item + " must be a table");
      }
      try {
        if (std::string(part) == "numeric") {
          stats->numeric.push_back({string_field(L, -1, "name", item),
                                    number_field(L, -1, "mean", item),
                                    number_field(L, -1, "std", item)});
        } else {
          stats->categorical.push_back(
              {string_field(L, -1, "name", item), string_list_field(L, -1, "values", item)});
        }
      } catch (...) {
        lua_settop(L, list - 1);
        throw;
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return stats;
}

// data.csv{path, target, numeric = {...}, categorical = {...}, header = true, delimiter = ',',
//          target_type = 'class' | 'float', missing = 'error' | 'fill' | 'skip', na = {...},
//          skip_bad = false, stats = train_pipeline_or_table}
int d_csv(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "data.csv",
              {"path", "target", "numeric", "categorical", "header", "delimiter", "target_type",
               "missing", "na", "skip_bad", "stats"});
    if (!o.has("path")) throw ArgumentError("data.csv: option 'path' is required");
    data::CsvOptions options;
    options.path = o.string("path", "");
    if (auto target = o.strings("target")) {
      if (target->size() != 1) throw ArgumentError("data.csv: option 'target' is one column");
      options.target = target->front();
    }
    options.numeric = o.strings("numeric");
    options.categorical = o.strings("categorical");
    options.header = o.boolean("header", true);
    const std::string delimiter = o.string("delimiter", ",");
    if (delimiter.size() != 1 || delimiter == "\"" || delimiter == "\n") {
      throw ArgumentError("data.csv: delimiter must be one character, got '" + delimiter + "'");
    }
    options.delimiter = delimiter[0];
    const std::string target_type = o.string("target_type", "class");
    if (target_type != "class" && target_type != "float") {
      throw ArgumentError("data.csv: target_type must be 'class' or 'float', got '" + target_type +
                          "'");
    }
    options.class_target = target_type == "class";
    const std::string missing = o.string("missing", "error");
    if (missing == "error") {
      options.missing = data::MissingValues::kError;
    } else if (missing == "fill") {
      options.missing = data::MissingValues::kFill;
    } else if (missing == "skip") {
      options.missing = data::MissingValues::kSkip;
    } else {
      throw ArgumentError("data.csv: missing must be 'error', 'fill' or 'skip', got '" + missing +
                          "'");
    }
    if (auto na = o.strings("na")) options.na = *na;
    options.skip_bad = o.boolean("skip_bad", false);
    if (o.has("stats")) {
      o.push_field("stats");
      const int index = lua_gettop(L);
      try {
        options.stats = read_stats(L, index);
      } catch (...) {
        lua_settop(L, index - 1);
        throw;
      }
      lua_pop(L, 1);
    }
    return push_pipeline(L, data::Pipeline(std::make_shared<data::CsvSource>(options)));
  });
}

int p_stats(lua_State* L) {
  return guarded(L, [&] {
    const auto* csv = csv_source(pipeline(L, "stats"));
    if (!csv) throw ArgumentError("stats: only data.csv pipelines have statistics");
    push_stats(L, *csv->stats());
    return 1;
  });
}

// ds:classes(): class names of image folders (folder names) and CSV class targets.
int p_classes(lua_State* L) {
  return guarded(L, [&] {
    const auto& p = pipeline(L, "classes");
    if (const auto* csv = csv_source(p)) {
      push_string_list(L, csv->stats()->classes);
    } else if (const auto names = p.source().class_names(); !names.empty()) {
      push_string_list(L, names);  // an image folder, or a split of one
    } else {
      throw ArgumentError("classes: only data.image_folder and data.csv pipelines name classes");
    }
    return 1;
  });
}

const Binding kCsvFunctions[] = {{"csv", d_csv}, {nullptr, nullptr}};
const Binding kCsvPipelineMethods[] = {
    {"stats", p_stats}, {"classes", p_classes}, {nullptr, nullptr}};

}  // namespace

const Binding* csv_functions() {
  return kCsvFunctions;
}

const Binding* csv_pipeline_methods() {
  return kCsvPipelineMethods;
}

}  // namespace engine::lua
