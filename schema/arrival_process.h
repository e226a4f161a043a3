#pragma once
// The arrival-process spec string, the one parser for `lull compile
// --arrivals`, `lull simulate --arrivals` and `lull loadgen --arrivals`, and
// the text a policy records in PolicyInputs.arrivals (the runtime's loader
// parses it back and refuses what it does not know):
//   poisson        exponential gaps
//   uniform        evenly spaced (load generator only: no MDP models it)
//   gamma:CV2      renewal, Gamma gaps with squared coefficient of variation CV2 > 0
//   batch:D        compound Poisson: bursts at Poisson times, logarithmic burst
//                  sizes, counts with index of dispersion D >= 1 (D = 1 is Poisson)
// Lists for a policy library: gamma:1,2,4,8 and batch:2,4 (one process each).
// Errors throw std::invalid_argument naming `flag`.
#include <string>
#include <vector>

namespace lull {

struct ArrivalProcess {
  enum class Kind { kPoisson, kUniform, kGamma, kBatch };
  Kind kind = Kind::kPoisson;
  double cv2 = 1;         // gamma: CV^2 of the gaps
  double dispersion = 1;  // batch: Var N / E N of the counts in any interval

  static ArrivalProcess poisson() { return {}; }
  static ArrivalProcess uniform() { return {Kind::kUniform, 1, 1}; }
  static ArrivalProcess gamma(double cv2) { return {Kind::kGamma, cv2, 1}; }
  static ArrivalProcess batch(double dispersion) { return {Kind::kBatch, 1, dispersion}; }
  // Poisson in law: gamma:1 and batch:1 are Poisson.
  bool is_poisson() const {
    return kind == Kind::kPoisson || (kind == Kind::kGamma && cv2 == 1) || (kind == Kind::kBatch && dispersion == 1);
  }
  // Long-run index of dispersion of the counts (the burstiness a load monitor sees).
  double burstiness() const {
    return kind == Kind::kGamma ? cv2 : kind == Kind::kBatch ? dispersion : kind == Kind::kUniform ? 0 : 1;
  }
};

bool operator==(const ArrivalProcess& a, const ArrivalProcess& b);

// Largest CV^2 or D accepted (beyond it a policy's tables grow without use).
inline constexpr double kMaxBurstiness = 1000;

// One process; `uniform` only when allow_uniform.
ArrivalProcess parse_arrival_process(const std::string& text, const std::string& flag, bool allow_uniform = false);
// One or more processes of one family: "gamma:1,2,4,8", "batch:2,4", "poisson".
std::vector<ArrivalProcess> parse_arrival_processes(const std::string& text, const std::string& flag);
// A process that changes over time (the simulator's --arrivals): one process,
// or steps "SPEC@START_S,SPEC@START_S,..." with start times in seconds,
// strictly ascending from 0 ("poisson@0,gamma:4@60,batch:4@120"); each step
// holds until the next. `uniform` only when allow_uniform.
struct ArrivalStep {
  double start_s = 0;
  ArrivalProcess process;
};
std::vector<ArrivalStep> parse_arrival_schedule(const std::string& text, const std::string& flag,
                                                bool allow_uniform = false);
// The spec string of a process: "poisson", "uniform", "gamma:2.5", "batch:4"
// (%.17g: parses back to the same double).
std::string arrival_process_text(const ArrivalProcess& p);
// An estimate's label: the parameter to 3 significant digits, positional
// (batch:48.4, gamma:1230), for logs and traces; arrival_process_text for
// what a policy was compiled for.
std::string arrival_estimate_text(const ArrivalProcess& p);

}  // namespace lull
