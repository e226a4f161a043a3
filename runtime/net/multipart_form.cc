#include "runtime/net/multipart_form.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace lull::net {

namespace {

bool iequal_prefix(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The value of `key=` among the ';'-separated parameters of a header value
// (quotes removed), or "".
std::string_view parameter(std::string_view header_value, std::string_view key) {
  std::size_t pos = 0;
  while (pos < header_value.size()) {
    std::size_t end = header_value.find(';', pos);
    if (end == std::string_view::npos) end = header_value.size();
    std::string_view item = trim(header_value.substr(pos, end - pos));
    pos = end + 1;
    if (item.size() > key.size() && iequal_prefix(item, key) && item[key.size()] == '=') {
      std::string_view v = trim(item.substr(key.size() + 1));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return {};
}

// The form field name of a part whose headers are `headers` (CRLF-separated).
std::string_view part_name(std::string_view headers) {
  std::size_t pos = 0;
  while (pos < headers.size()) {
    std::size_t end = headers.find("\r\n", pos);
    if (end == std::string_view::npos) end = headers.size();
    const std::string_view line = headers.substr(pos, end - pos);
    pos = end + 2;
    constexpr std::string_view kDisposition = "content-disposition:";
    if (iequal_prefix(line, kDisposition)) return parameter(line.substr(kDisposition.size()), "name");
  }
  return {};
}

}  // namespace

bool is_multipart_form(std::string_view content_type) {
  return iequal_prefix(trim(content_type), "multipart/form-data");
}

std::optional<std::string> multipart_field(std::string_view content_type, std::string_view body,
                                           std::string_view name) {
  const std::string_view boundary =
      parameter(content_type.substr(std::min(content_type.find(';'), content_type.size())), "boundary");
  if (boundary.empty() || boundary.size() > 70) return std::nullopt;  // RFC 2046: 1..70 characters
  // Every part starts after "--BOUNDARY" at the body's start or after CRLF.
  const std::string delimiter = "\r\n--" + std::string(boundary);
  const std::boyer_moore_horspool_searcher find_delimiter(delimiter.begin(), delimiter.end());
  const std::string_view first(delimiter.data() + 2, delimiter.size() - 2);
  if (body.substr(0, first.size()) != first) return std::nullopt;
  std::size_t pos = first.size();
  for (;;) {
    // After a delimiter: "--" ends the body, CRLF starts a part.
    if (body.substr(pos, 2) == "--") return std::nullopt;
    if (body.substr(pos, 2) != "\r\n") return std::nullopt;
    pos += 2;
    // A part without headers has its blank line right here (and no name).
    if (body.substr(pos, 2) == "\r\n") return std::nullopt;
    const std::size_t headers_end = body.find("\r\n\r\n", pos);
    if (headers_end == std::string_view::npos) return std::nullopt;
    const std::string_view headers = body.substr(pos, headers_end - pos);
    const std::size_t content = headers_end + 4;
    const auto next = std::search(body.begin() + static_cast<std::ptrdiff_t>(content), body.end(), find_delimiter);
    if (next == body.end()) return std::nullopt;
    const std::size_t content_end = static_cast<std::size_t>(next - body.begin());
    if (part_name(headers) == name) return std::string(body.substr(content, content_end - content));
    pos = content_end + delimiter.size();
  }
}

}  // namespace lull::net
