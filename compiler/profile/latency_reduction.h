#pragma once
// From raw latency samples to the table lat(m, b), b = 1..N+1, exactly as
// mdp-spec section 1.1 says: percentile with linear interpolation, OLS fill of
// missing batch sizes, a backward monotone pass, and batch N+1 (and any batch
// beyond the profiled range) from a second OLS line over the completed table.
#include <cstddef>
#include <map>
#include <vector>

namespace lull::compiler {

// numpy.percentile's default ("linear") method. `samples` must be non-empty.
double percentile_linear(std::vector<double> samples, double pct);

// Far-out samples of one (model, batch) measurement, for `lull profile` to
// measure again: above Q3 + 3 IQR (Tukey's far-out fence) and above 1.5x the
// median, when they are at most max(1, n/50) of the n samples (more is a
// real tail, kept). Indices in `samples`; empty for fewer than 4 samples.
// The compiler itself reduces samples as mdp-spec 1.1 says, outliers included.
std::vector<std::size_t> far_out_samples(const std::vector<double>& samples, double* fence = nullptr);

struct OlsLine {
  double intercept = 0, slope = 0;
  double at(double x) const { return intercept + slope * x; }
};
// Least squares y ~ x; needs at least two distinct x.
OlsLine fit_ols(const std::vector<double>& x, const std::vector<double>& y);

// `measured_s`: batch size -> reduced latency in seconds (at least one entry;
// two distinct batch sizes when any of 1..profiled_batches is missing).
// Returns latency in microseconds for b = 1..max_queue+1.
// profiled_batches is Bp of the spec (32, or the largest measured batch if larger).
std::vector<double> complete_latency_table_us(const std::map<int, double>& measured_s, int max_queue,
                                              int profiled_batches = 32);

}  // namespace lull::compiler
