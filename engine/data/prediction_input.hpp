// What engine predict reads as new data, for the sources that read images: a CSV whose 'path'
// column lists image files. Source::prediction_source's default and the image folder's use it.
#pragma once

#include <string>
#include <vector>

namespace engine::data {

// The image files a CSV's 'path' column lists, relative to the CSV's folder unless absolute.
// DataError naming the CSV when it has no such column, a row without a path, or no row.
std::vector<std::string> listed_images(const std::string& csv);

}  // namespace engine::data
