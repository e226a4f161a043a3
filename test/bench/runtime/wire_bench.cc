// What each model-server protocol costs lull per batch: encoding a batch's
// request and splitting its answer back into one prediction per query, for
// TorchServe's batch contract and the Open Inference Protocol (bytes as JSON
// or in the binary tensor extension, and tensors passed through); and what
// the v2 front end pays to read a client's request (JSON with base64, binary,
// gzip-compressed). Argument: the batch size (rows of the client's request).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <zlib.h>

#include "runtime/frontend/v2_front_codec.h"
#include "runtime/net/base64.h"
#include "runtime/net/content_encoding.h"
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
void BM_WireV2BytesBinary(benchmark::State& state) {
  static lull::v2::V2Wire wire;
  wire.set_binary(lull::v2::V2Wire::Binary::kOn);
  round_trip(state, wire, true, kImage);
}

// A client's request of n 3 KB images, [n] BYTES: base64 JSON (MLServer's
// content_type), the binary extension (Triton's client default), or the JSON
// form gzip-compressed (Content-Encoding, inflated first).
// 3 KB of noise: compresses as an image does (hardly), unlike kImage.
const std::string kNoise = [] {
  std::string s(3000, '\0');
  std::uint32_t x = 12345;
  for (char& c : s) c = static_cast<char>((x = x * 1664525u + 1013904223u) >> 24);
  return s;
}();

std::string json_request(int n) {
  std::string s = R"({"inputs":[{"name":"input","shape":[)" + std::to_string(n) +
                  R"(],"datatype":"BYTES","parameters":{"content_type":"base64"},"data":[)";
  for (int i = 0; i < n; ++i) s += (i ? ",\"" : "\"") + lull::net::base64_encode(kNoise) + "\"";
  return s + "]}]}";
}

std::string binary_request(int n, std::string* header_length) {
  std::string raw;
  for (int i = 0; i < n; ++i) {
    const auto len = static_cast<std::uint32_t>(kNoise.size());
    raw.append(reinterpret_cast<const char*>(&len), 4);
    raw += kNoise;
  }
  const std::string head = R"({"inputs":[{"name":"input","shape":[)" + std::to_string(n) +
                           R"(],"datatype":"BYTES","parameters":{"binary_data_size":)" + std::to_string(raw.size()) +
                           "}}]}";
  *header_length = std::to_string(head.size());
  return head + raw;
}

std::string gzip(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void BM_FrontV2Json(benchmark::State& state) {
  const std::string body = json_request(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    lull::frontend::V2InferRequest r;
    std::string error;
    benchmark::DoNotOptimize(lull::frontend::parse_v2_infer_request(body, &r, &error));
  }
  state.counters["body_bytes"] = static_cast<double>(body.size());
}
void BM_FrontV2Binary(benchmark::State& state) {
  std::string header;
  const std::string body = binary_request(static_cast<int>(state.range(0)), &header);
  for (auto _ : state) {
    lull::frontend::V2InferRequest r;
    std::string error;
    benchmark::DoNotOptimize(lull::frontend::parse_v2_infer_request(body, &r, &error, header));
  }
  state.counters["body_bytes"] = static_cast<double>(body.size());
}
void BM_FrontV2Gzip(benchmark::State& state) {
  const std::string body = gzip(json_request(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    std::string inflated, error;
    lull::net::inflate_body("gzip", body, 64 << 20, &inflated, &error);
    lull::frontend::V2InferRequest r;
    benchmark::DoNotOptimize(lull::frontend::parse_v2_infer_request(inflated, &r, &error));
  }
  state.counters["body_bytes"] = static_cast<double>(body.size());
}

BENCHMARK(BM_WireTorchServe)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_WireV2Bytes)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_WireV2Tensors)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_WireV2BytesBinary)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_FrontV2Json)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_FrontV2Binary)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_FrontV2Gzip)->Arg(1)->Arg(16)->Repetitions(3)->ReportAggregatesOnly(true);

}  // namespace
