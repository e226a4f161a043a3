#pragma once
// The slack grid T_0 = 0 < T_1 < ... < T_J = S of mdp-spec section 2.
#include <vector>

#include "compiler/profile/model_table.h"

namespace lull::compiler {

// FLD: T_j = j S / D, j = 0..D.
std::vector<double> fld_grid_us(double slo_us, int intervals);

// MD: {0} U {lat(m, b) <= S, b = 1..N} U {S}, sorted, distinct.
std::vector<double> md_grid_us(double slo_us, const std::vector<ModelTable>& models, int max_queue);

// Index of the last T_i <= slack, 0 when slack < 0 (mdp-spec 2.3).
int slack_index(const std::vector<double>& grid_us, double slack_us);

}  // namespace lull::compiler
