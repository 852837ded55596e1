#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "tests/test_support.hpp"

namespace fs = std::filesystem;
using namespace engine;

TEST_CASE("remove_tree removes a folder and everything under it, links not followed") {
  const std::string root = test::scratch_dir("remove_tree");
  const std::string keep = root + "/kept.txt";  // outside the tree, reached through a link
  std::ofstream(keep) << "stays";
  const std::string tree = root + "/tree";
  fs::create_directories(tree + "/a/b/c");
  std::ofstream(tree + "/a/b/c/file.bin") << "x";
  std::ofstream(tree + "/top.txt") << "y";
  fs::create_symlink(keep, tree + "/a/link");
  fs::create_directory_symlink(root, tree + "/a/b/loop");  // would recurse if followed

  core::remove_tree(tree);
  CHECK_FALSE(fs::exists(fs::symlink_status(tree)));
  CHECK(test::read_text(keep) == "stays");

  std::ofstream(tree) << "a plain file";
  core::remove_tree(tree);
  CHECK_FALSE(fs::exists(tree));
}

TEST_CASE("remove_tree: nothing there is not an error; a failure names the path") {
  const std::string root = test::scratch_dir("remove_tree_errors");
  CHECK_NOTHROW(core::remove_tree(root + "/missing"));
  CHECK(core::remove_tree_quietly(root + "/missing"));

  const std::string file = root + "/file";
  std::ofstream(file) << "x";
  const std::string under = file + "/under";
  CHECK_THROWS_WITH_AS(core::remove_tree(under), doctest::Contains(under.c_str()), core::IoError);
  CHECK_FALSE(core::remove_tree_quietly(under));
  CHECK(fs::exists(file));
}
