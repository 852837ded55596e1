// data.caffe_lmdb{root = ...} from Lua: a training script's source over a Caffe LMDB dataset.
#include <doctest/doctest.h>

#include "engine/core/errors.hpp"
#include "engine/data/caffe_lmdb.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "tests/test_support.hpp"

using namespace engine;

TEST_CASE("data.caffe_lmdb: a pipeline over the records, in key order") {
  if (!data::caffe_lmdb_available()) return;
  const auto dir = test::scratch_dir("lua-caffe-lmdb");
  std::vector<torch::Tensor> images;
  for (int i = 0; i < 5; ++i) images.push_back(torch::full({3, 6, 6}, i, torch::kUInt8));
  data::write_caffe_lmdb(dir + "/db", images, {0, 1, 2, 3, 4});
  lua::Runtime runtime;
  const int results = runtime.run_string(
      "local data = require 'data'\n"
      "local p = data.caffe_lmdb{root = '" +
          dir +
          "/db', mode = 'gray'}\n"
          "return #p, tostring(p), #p:batch(2)\n",
      "caffe_lmdb_check", 3);
  lua_State* L = runtime.state();
  REQUIRE(results == 3);
  CHECK(lua_tonumber(L, -3) == 5);
  CHECK(std::string(lua_tostring(L, -2)).find("caffe_lmdb(" + dir + "/db, 5 records)") == 0);
  CHECK(lua_tonumber(L, -1) == 3);
  lua_settop(L, 0);
  CHECK_THROWS_WITH_AS(
      runtime.run_string("require 'data'.caffe_lmdb{root = '" + dir + "'}", "missing", 0),
      doctest::Contains("is not an LMDB database"), core::ScriptError);
}
