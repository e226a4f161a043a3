#pragma once
// A class's expectation mixed from its kinds' (docs/user-guide.md): queries
// expected at (accuracy per satisfied query, violation rate) are added up;
// the violation rate is the query-weighted mean, the accuracy the mean over
// the satisfied queries. Mixing classes into a fleet is the same sum. The
// compiler's split search and the fleet simulator both mix with it.
namespace lull {

struct ExpectationMix {
  double queries = 0, violated = 0, accuracy_sum = 0;
  void add(double n, double accuracy, double violation_rate) {
    queries += n;
    violated += n * violation_rate;
    accuracy_sum += n * (1 - violation_rate) * accuracy;
  }
  double violation_rate() const { return queries > 0 ? violated / queries : 0; }
  double accuracy() const { return queries - violated > 0 ? accuracy_sum / (queries - violated) : 0; }
};

}  // namespace lull
