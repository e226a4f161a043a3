#pragma once
// Where a worker's model server listens. TorchServe serves inference and
// management on two ports (8080 and 8081 by default); the stand-in server
// serves both on one.
#include <string>
#include <vector>

namespace lull::torchserve {

struct WorkerEndpoint {
  std::string inference_url;   // base URL, e.g. http://127.0.0.1:8080 (no trailing slash)
  std::string management_url;  // base URL; the inference URL when the server has one port
};

// Checks that `url` is http://HOST:PORT[/] and returns it without the trailing
// slash; throws std::invalid_argument("URL: why") otherwise.
std::string normalize_base_url(const std::string& url);

// Parses "--workers" (comma-separated base URLs) and the optional parallel
// "--management-urls". Throws std::invalid_argument naming the bad URL.
std::vector<WorkerEndpoint> parse_worker_endpoints(const std::string& workers, const std::string& management_urls);

// Splits "a,b,,c" into {"a","b","c"}.
std::vector<std::string> split_list(const std::string& text);

}  // namespace lull::torchserve
