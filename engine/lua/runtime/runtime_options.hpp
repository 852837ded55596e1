// Where a Lua runtime looks for modules and datasets; a plain struct, free of Lua's headers, so
// that the commands can say it (engine/lua/session.hpp).
#pragma once

#include <string>
#include <vector>

namespace engine::lua {

struct RuntimeOptions {
  std::vector<std::string> package_dirs;  // searched by require, in order, before the defaults
  std::string script_dir;                 // the folder of the script being run
  std::vector<std::string> dataset_dirs;  // searched by data.find before the system folders
  bool script_may_exit = false;           // engine run: os.exit ends the script (os_exit.hpp)
};

}  // namespace engine::lua
