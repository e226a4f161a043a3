#pragma once
// Content checksums for policy files. FNV-1a 64 is enough to catch truncation
// and bit rot; policies are not a security boundary.
#include <cstdint>
#include <string>

namespace google::protobuf {
class Message;
}

namespace lull {

std::uint64_t fnv1a64(const std::string& bytes);

// Deterministic serialization, so the same content always hashes the same.
std::string serialize_deterministic(const google::protobuf::Message& msg);

}  // namespace lull
