// Inflating compressed request bodies (why: see content_encoding.h).
#include "runtime/net/content_encoding.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>

namespace lull::net {

namespace {

std::string lower_trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  std::string out = b == std::string::npos ? "" : s.substr(b, e - b + 1);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// One zlib pass with these window bits; kCorrupt when the data is not of that format.
InflateResult inflate_with(int window_bits, const std::string& body, std::size_t max_bytes, std::string* out) {
  z_stream z{};
  if (inflateInit2(&z, window_bits) != Z_OK) return InflateResult::kCorrupt;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  out->clear();
  char buf[16384];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    const std::size_t produced = sizeof buf - z.avail_out;
    if (out->size() + produced > max_bytes) {
      inflateEnd(&z);
      return InflateResult::kTooLarge;
    }
    out->append(buf, produced);
    if (rc == Z_OK && produced == 0 && z.avail_in == 0) break;  // truncated input
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END && z.avail_in == 0 ? InflateResult::kOk : InflateResult::kCorrupt;
}

}  // namespace

InflateResult inflate_body(const std::string& encoding, const std::string& body, std::size_t max_bytes,
                           std::string* out, std::string* error) {
  const std::string e = lower_trimmed(encoding);
  if (e.empty() || e == "identity") {
    *out = body;
    return InflateResult::kOk;
  }
  InflateResult r;
  if (e == "gzip" || e == "x-gzip") {
    r = inflate_with(16 + MAX_WBITS, body, max_bytes, out);
  } else if (e == "deflate") {
    r = inflate_with(MAX_WBITS, body, max_bytes, out);  // zlib format, what HTTP's deflate means
    if (r == InflateResult::kCorrupt) r = inflate_with(-MAX_WBITS, body, max_bytes, out);  // raw, as some send
  } else {
    *error = "Content-Encoding '" + encoding + "' is not supported (gzip, deflate, identity)";
    return InflateResult::kUnsupported;
  }
  if (r == InflateResult::kCorrupt) *error = "the body is not valid " + e + " (Content-Encoding)";
  if (r == InflateResult::kTooLarge)
    *error = "the " + e + " body inflates past " + std::to_string(max_bytes) + " bytes (--max-body-bytes)";
  return r;
}

}  // namespace lull::net
