#pragma once
// One field of a multipart/form-data body (curl -F data=@x, the form
// TorchServe clients send), found in a single pass over the body with the
// boundary from the Content-Type; no copy of the other parts. It replaces
// cpp-httplib's form parsing now that the front end is Boost.Beast.
#include <optional>
#include <string>
#include <string_view>

namespace lull::net {

// True when the Content-Type names multipart/form-data.
bool is_multipart_form(std::string_view content_type);

// The content of the first part named `name` (Content-Disposition:
// form-data; name="NAME"), or nullopt when there is none or the body is
// not a well-formed multipart body with the Content-Type's boundary.
std::optional<std::string> multipart_field(std::string_view content_type, std::string_view body, std::string_view name);

}  // namespace lull::net
