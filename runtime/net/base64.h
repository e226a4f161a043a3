#pragma once
// Standard base64 (RFC 4648, with padding): query inputs travel base64-encoded
// inside the JSON batch contract.
#include <optional>
#include <string>
#include <string_view>

namespace lull::net {

std::string base64_encode(std::string_view bytes);
// nullopt when `text` is not valid padded base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace lull::net
