#include "engine/core/nearest_names.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>
#include <vector>

namespace engine::core {
namespace {

std::string lowered(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Edits between a and b: insertions, deletions, substitutions and swaps of neighbours.
size_t edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

bool holds_in_order(const std::string& longer, const std::string& shorter) {
  size_t at = 0;
  for (char c : longer) {
    if (at < shorter.size() && c == shorter[at]) ++at;
  }
  return at == shorter.size();
}

}  // namespace

std::vector<std::string> nearest_names(const std::string& name,
                                       const std::vector<std::string>& candidates, size_t limit) {
  const std::string wanted = lowered(name);
  const size_t reach = std::max<size_t>(1, wanted.size() / 3);
  // (rank, distance, name): rank 0 for a few edits away, 1 for letters held in order
  std::set<std::tuple<int, size_t, std::string>> found;
  for (const auto& candidate : candidates) {
    if (candidate == name) continue;
    const std::string c = lowered(candidate);
    const size_t distance = edit_distance(wanted, c);
    if (distance <= reach) {
      found.emplace(0, distance, candidate);
      continue;
    }
    const auto& longer = c.size() >= wanted.size() ? c : wanted;
    const auto& shorter = c.size() >= wanted.size() ? wanted : c;
    if (shorter.size() >= 3 && shorter.size() * 5 >= longer.size() * 2 &&
        longer.compare(0, 1, shorter, 0, 1) == 0 && holds_in_order(longer, shorter)) {
      found.emplace(1, longer.size() - shorter.size(), candidate);
    }
  }
  std::vector<std::string> out;
  for (const auto& [rank, distance, candidate] : found) {
    if (out.size() == limit) break;
    out.push_back(candidate);
  }
  return out;
}

}  // namespace engine::core
