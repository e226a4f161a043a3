// Reading TorchServe's key file and recognising its token refusals (why: see
// torchserve_token.h).
#include "runtime/torchserve/torchserve_token.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <fstream>

namespace lull::serve {

namespace {

using google::protobuf::Value;

constexpr std::size_t kMaxKeyFileBytes = 1 << 20;  // TorchServe's file is a few hundred bytes
constexpr std::size_t kMaxKeyBytes = 4096;

std::string key_of(const google::protobuf::Struct& file, const std::string& path, const std::string& section) {
  const auto& f = file.fields();
  auto s = f.find(section);
  if (s == f.end() || s->second.kind_case() != Value::kStructValue)
    throw std::invalid_argument(path + ": " + section + ": missing (expected TorchServe's key_file.json)");
  const auto& sf = s->second.struct_value().fields();
  auto k = sf.find("key");
  if (k == sf.end() || k->second.kind_case() != Value::kStringValue || k->second.string_value().empty())
    throw std::invalid_argument(path + ": " + section + ".key: missing or not a non-empty string");
  // The key goes into an "Authorization: Bearer" header: a line break or a
  // control byte in it would end or forge the header.
  const std::string& key = k->second.string_value();
  if (key.size() > kMaxKeyBytes ||
      !std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 0x7f; }))
    throw std::invalid_argument(path + ": " + section + ".key: must be at most " + std::to_string(kMaxKeyBytes) +
                                " printable ASCII characters without spaces (it is sent as an HTTP header)");
  return key;
}

}  // namespace

TorchServeKeys read_torchserve_key_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read the TorchServe key file");
  std::string text(kMaxKeyFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxKeyFileBytes)
    throw std::invalid_argument(path + ": larger than " + std::to_string(kMaxKeyFileBytes) +
                                " bytes (expected TorchServe's key_file.json)");
  google::protobuf::Struct file;
  if (!google::protobuf::util::JsonStringToMessage(text, &file).ok())
    throw std::invalid_argument(path + ": not a JSON object (expected TorchServe's key_file.json)");
  TorchServeKeys keys;
  keys.inference = key_of(file, path, "inference");
  keys.management = key_of(file, path, "management");
  return keys;
}

bool is_token_refusal(const HttpResponse& response) {
  if (!response.error.empty()) return false;
  if (response.status == 401 || response.status == 403) return true;
  return response.status == 400 && response.body.find("InvalidKeyException") != std::string::npos;
}

std::string describe_token_refusal(const std::string& url, const std::string& api, bool token_sent,
                                   const HttpResponse& response) {
  std::string line = "model server " + url + " refused the " + api + " token (HTTP " +
                     std::to_string(response.status) + "): ";
  line += token_sent ? "the " + api + " key of --torchserve-token-file is wrong or expired"
                     : "no token was sent; give --torchserve-token-file with TorchServe's key_file.json";
  return line;
}

}  // namespace lull::serve
