#pragma once
// Request bodies a client compressed: Content-Encoding gzip or deflate (the
// zlib format, as HTTP's "deflate" means; raw deflate is taken too), which
// Triton's HTTP client offers (request_compression_algorithm). Inflated in
// bounded memory: a body that would inflate past `max_bytes` is refused
// before more is produced (a small gzip bomb cannot make lull buffer gigabytes).
#include <cstddef>
#include <string>

namespace lull::net {

enum class InflateResult { kOk, kUnsupported, kCorrupt, kTooLarge };

// `encoding`: the Content-Encoding header ("" or "identity": `body` as it is).
// kOk with *out the inflated body; else *error says why, one line.
InflateResult inflate_body(const std::string& encoding, const std::string& body, std::size_t max_bytes,
                           std::string* out, std::string* error);

}  // namespace lull::net
