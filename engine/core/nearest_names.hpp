// "Did you mean": the known names nearest to one that is not known (a misspelt field, a layer
// PyTorch names differently), for error messages.
#pragma once

#include <string>
#include <vector>

namespace engine::core {

// Up to `limit` of `candidates` close to `name`, nearest first: those within a few edits
// (letters swapped, missing or extra, case ignored; a third of the name's length, at least one),
// then those that hold the name's letters in order or are held by it (BCELoss in
// BCEWithLogitsLoss) when the shorter has 3 letters or more.
std::vector<std::string> nearest_names(const std::string& name,
                                       const std::vector<std::string>& candidates,
                                       size_t limit = 3);

}  // namespace engine::core
