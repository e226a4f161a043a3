// What each model-server protocol costs lull per batch: encoding a batch's
// request and splitting its answer back into one prediction per query, for
// TorchServe's batch contract and the Open Inference Protocol (bytes, and
// tensors passed through). Argument: the batch size.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "runtime/upstream/torchserve/batch_wire.h"
#include "runtime/upstream/v2/v2_codec.h"
#include "runtime/upstream/v2/v2_wire.h"

namespace {

const std::string kPrediction = R"({"class":281,"score":0.871234})";

// The answer a server gives for `n` queries, in the wire's form.
std::string answer(bool v2, int n) {
  std::string s =
      v2 ? R"({"model_name":"m","model_version":"1","outputs":[{"name":"output","datatype":"BYTES","shape":[)" +
               std::to_string(n) + R"(],"data":[)"
         : R"({"predictions":[)";
  for (int i = 0; i < n; ++i) {
    if (i) s += ',';
    s += v2 ? R"("{\"class\":281,\"score\":0.871234}")" : kPrediction;
  }
  return s + (v2 ? "]}]}" : "]}");
}

void round_trip(benchmark::State& state, const lull::torchserve::BatchWire& wire, bool v2, const std::string& input) {
  const int n = static_cast<int>(state.range(0));
  std::vector<const std::string*> inputs(static_cast<size_t>(n), &input);
  const std::string body = answer(v2, n);
  for (auto _ : state) {
    auto req = wire.batch_request("http://127.0.0.1:8080", "resnet18", inputs);
    auto out = wire.decode_batch(body, static_cast<size_t>(n));
    benchmark::DoNotOptimize(req);
    benchmark::DoNotOptimize(out);
  }
}

const std::string kImage(3000, '\x89');  // 3 KB of bytes that are not text

void BM_WireTorchServe(benchmark::State& state) {
  round_trip(state, lull::torchserve::torchserve_wire(), false, kImage);
}
void BM_WireV2Bytes(benchmark::State& state) {
  static const lull::v2::V2Wire wire;
  round_trip(state, wire, true, kImage);
}
void BM_WireV2Tensors(benchmark::State& state) {
  static const lull::v2::V2Wire wire;
  std::string tensor = R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,64],"data":[)";
  for (int i = 0; i < 64; ++i) tensor += (i ? "," : "") + std::to_string(i * 0.25);
  round_trip(state, wire, true, tensor + "]}]}");
}
BENCHMARK(BM_WireTorchServe)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_WireV2Bytes)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_WireV2Tensors)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);

}  // namespace
