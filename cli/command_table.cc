// The table of lull's subcommands: one line each. Add a subcommand here and
// in cli/CMakeLists.txt; nothing else needs to know about it.
#include "cli/commands.h"

namespace lull::cli {

int run_compile(int argc, char** argv);
int run_profiles_import(int argc, char** argv);
int run_policy_show(int argc, char** argv);
int run_policy_dump(int argc, char** argv);
int run_policy_library(int argc, char** argv);
int run_bench_compile(int argc, char** argv);
int run_bench_serve(int argc, char** argv);
int run_bench_online(int argc, char** argv);
int run_simulate(int argc, char** argv);
int run_profile(int argc, char** argv);
int run_loadgen(int argc, char** argv);
int run_serve(int argc, char** argv);
int run_profiles_interpolate(int argc, char** argv);
int run_plan(int argc, char** argv);
int run_plan_variants(int argc, char** argv);
int run_check(int argc, char** argv);

const Command kCommands[] = {
    {"compile", "build a policy set from profiles, an SLO, workers and loads", run_compile},
    {"profiles import", "convert a RAMSIS-artifact profile folder to lull's profile JSON", run_profiles_import},
    {"profiles interpolate", "add synthetic models along the accuracy/latency Pareto front (paper 7.3.2)",
     run_profiles_interpolate},
    {"plan", "the fewest workers (and models) meeting an SLO target at a load or over a trace", run_plan},
    {"plan variants",
     "model variants by load under a memory budget: policy sets and a manifest for serve --variant-sets",
     run_plan_variants},
    {"policy show", "print a readable summary of a policy set", run_policy_show},
    {"policy dump", "print every (n, j, model, batch) row of a policy set", run_policy_dump},
    {"policy library", "join policy sets of several worker counts into one policy library", run_policy_library},
    {"bench compile", "time the compiler's phases on a profile set", run_bench_compile},
    {"bench serve", "lull's latency overhead over calling a model server directly, side by side", run_bench_serve},
    {"bench online", "the latency of one online compilation (request -> policy ready to swap in)", run_bench_online},
    {"simulate", "run a policy set or a baseline in the discrete-event simulator", run_simulate},
    {"profile", "measure batch latencies through a model server and write a profile", run_profile},
    {"loadgen", "open-loop HTTP load generator with latency percentiles", run_loadgen},
    {"check", "whether a policy set's latencies hold against running model servers, before serving", run_check},
    {"serve", "serve a task through TorchServe-compatible model servers", run_serve},
    {nullptr, nullptr, nullptr},
};

}  // namespace lull::cli
