#include "runtime/upstream/torchserve/worker_endpoint.h"

#include <cctype>
#include <stdexcept>

namespace lull::torchserve {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      cur += c;
    }
  }
  return out;
}

std::string normalize_base_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0)
    throw std::invalid_argument(url + ": expected http://HOST:PORT (https is not supported)");
  std::string rest = url.substr(scheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  if (rest.find('/') != std::string::npos || colon == std::string::npos || colon == 0 || colon + 1 == rest.size())
    throw std::invalid_argument(url + ": expected http://HOST:PORT with no path");
  for (size_t i = colon + 1; i < rest.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(rest[i]))) throw std::invalid_argument(url + ": port is not a number");
  const long port = std::stol(rest.substr(colon + 1));
  if (port < 1 || port > 65535) throw std::invalid_argument(url + ": port out of range");
  return scheme + rest;
}

std::vector<WorkerEndpoint> parse_worker_endpoints(const std::string& workers, const std::string& management_urls) {
  const auto inference = split_list(workers);
  const auto management = split_list(management_urls);
  if (inference.empty()) throw std::invalid_argument("no worker URLs given");
  if (!management.empty() && management.size() != inference.size())
    throw std::invalid_argument("got " + std::to_string(management.size()) + " management URLs for " +
                                std::to_string(inference.size()) + " workers");
  std::vector<WorkerEndpoint> out;
  for (size_t i = 0; i < inference.size(); ++i) {
    WorkerEndpoint w;
    w.inference_url = normalize_base_url(inference[i]);
    w.management_url = management.empty() ? w.inference_url : normalize_base_url(management[i]);
    out.push_back(w);
  }
  return out;
}

}  // namespace lull::torchserve
