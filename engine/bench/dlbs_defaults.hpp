// DLBS's default parameters (its configs/base.json and configs/pytorch.json): what every
// experiment of a DLBS config has before the file sets anything, with each one's type, which
// DLBS casts a computed value to. Left out: what only DLBS's own launch scripts and docker
// command lines read (they name DLBS's install folder).
#pragma once

#include <string>
#include <vector>

namespace engine::bench {

struct DlbsDefault {
  const char* name;
  const char* type;  // str, int, float or bool
  const char* value_json;
};
const std::vector<DlbsDefault>& dlbs_defaults();

// DLBS's frameworks other than PyTorch. A reference to one's parameter (DLBS resolves
// ${${exp.framework_family}.data_dir} through the framework's own defaults, which the engine
// does not carry), or to a framework's parameter with no framework set (${.data_dir}), reads
// as empty.
bool names_other_framework(const std::string& reference);

// Whether DLBS has the name: one of its defaults above, one only its launch scripts read
// (exp.docker_image, pytorch.launcher, ...), or another framework's.
bool is_dlbs_name(const std::string& name);
// DLBS's exp.*, monitor.*, runtime.* and pytorch.* names, for suggestions.
std::vector<std::string> dlbs_names();

}  // namespace engine::bench
