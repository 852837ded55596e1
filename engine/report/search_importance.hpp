// A search's hyperparameter importance (fanova.hpp, Optuna's default): which of the searched
// hyperparameters the searched metric depends on, over the trials that completed.
#pragma once

#include <vector>

#include "engine/io/search_file.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

// Columns: hyperparameter, importance (shares summing to 1, largest first). As Optuna, over
// the completed trials with a finite metric and every searched hyperparameter; a number within
// its space's bounds as it is (search.log's too), a choice one-hot. The forest's seed is fixed,
// so the same trials always give the same figures. The title says why there are no rows (fewer
// than 2 such trials, or all with one metric). Nothing searched: no columns.
Table importance_table(const std::vector<io::SearchContents>& searches);

}  // namespace engine::report
