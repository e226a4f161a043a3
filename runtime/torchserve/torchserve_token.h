#pragma once
// TorchServe's token authorization (on by default since TorchServe 0.11): the
// server writes its keys to key_file.json and refuses API calls without
// "Authorization: Bearer KEY" (the inference key on the inference API, the
// management key on the management API). lull reads that file and recognises
// the server's refusal, so a missing or wrong token is reported as such, not
// as a missing model or a broken worker.
#include <stdexcept>
#include <string>

#include "runtime/net/http_transport.h"

namespace lull::serve {

struct TorchServeKeys {
  std::string inference;   // empty: send no Authorization header
  std::string management;
};

// Reads TorchServe's key_file.json:
//   {"management": {"key": "...", "expiration time": "..."},
//    "inference":  {"key": "...", "expiration time": "..."},
//    "API":        {"key": "..."}}
// Both "management.key" and "inference.key" must be non-empty strings of
// printable ASCII without spaces (they become an HTTP header); other fields
// are ignored; the file is at most 1 MiB. Throws
// std::invalid_argument("PATH: field: why"), one line.
TorchServeKeys read_torchserve_key_file(const std::string& path);

// True when the server refused the call for its token: 401 or 403, or
// TorchServe's own answer (400 with "InvalidKeyException").
bool is_token_refusal(const HttpResponse& response);

// One line for a refusal: "model server URL refused the inference token
// (HTTP 400): it is missing or wrong; ...". `api` is "inference" or "management".
std::string describe_token_refusal(const std::string& url, const std::string& api, bool token_sent,
                                   const HttpResponse& response);

}  // namespace lull::serve
