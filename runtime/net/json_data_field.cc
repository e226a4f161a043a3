#include "runtime/net/json_data_field.h"

#include <cstdint>

namespace lull::net {

namespace {

// A recursive-descent validator whose recursion is bounded by kMaxJsonDepth,
// so its stack and time are bounded by the body's length.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  JsonDataField run() {
    JsonDataField out;
    skip_space();
    out.is_object = peek() == '{';
    const bool ok = value(0, &out) && (skip_space(), pos_ == s_.size());
    out.valid_json = ok;
    out.too_deep = too_deep_;
    if (!ok) out.data.reset();
    return out;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  // `top` (the top-level object) collects its "data" member.
  bool value(int depth, JsonDataField* top) {
    skip_space();
    switch (peek()) {
      case '{':
        return object(depth + 1, top);
      case '[':
        return array(depth + 1);
      case '"':
        return string(nullptr);
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  bool object(int depth, JsonDataField* top) {
    if (depth > kMaxJsonDepth) return too_deep_ = true, false;
    ++pos_;  // {
    skip_space();
    if (peek() == '}') return ++pos_, true;
    for (;;) {
      skip_space();
      std::string key;
      if (peek() != '"' || !string(top ? &key : nullptr)) return false;
      skip_space();
      if (peek() != ':') return false;
      ++pos_;
      skip_space();
      if (top && key == "data" && peek() == '"') {
        std::string v;
        if (!string(&v)) return false;
        top->data = std::move(v);
      } else if (!value(depth, nullptr)) {
        return false;
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') return ++pos_, true;
      return false;
    }
  }

  bool array(int depth) {
    if (depth > kMaxJsonDepth) return too_deep_ = true, false;
    ++pos_;  // [
    skip_space();
    if (peek() == ']') return ++pos_, true;
    for (;;) {
      if (!value(depth, nullptr)) return false;
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') return ++pos_, true;
      return false;
    }
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  static void append_utf8(std::string* out, std::uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // A JSON string at pos_ ("..."); unescaped into *out when given.
  bool string(std::string* out) {
    ++pos_;  // "
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        if (out) out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return false;
      const char e = s_[pos_++];
      char plain = 0;
      switch (e) {
        case '"':
          plain = '"';
          break;
        case '\\':
          plain = '\\';
          break;
        case '/':
          plain = '/';
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return false;
          std::uint32_t cp = 0;
          for (int i = 0; i < 4; ++i) {
            const int h = hex(s_[pos_++]);
            if (h < 0) return false;
            cp = cp * 16 + static_cast<std::uint32_t>(h);
          }
          if (out) append_utf8(out, cp);  // surrogates kept as-is: "data" is base64, ASCII
          continue;
        }
        default:
          return false;
      }
      if (out) out->push_back(plain);
    }
    return false;  // unterminated
  }

  bool number() {
    const std::size_t start = pos_;
    if (peek() == '-') ++pos_;
    auto digits = [this] {
      const std::size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > from;
    };
    if (!digits()) return false;
    if (peek() == '.') {
      ++pos_;
      if (!digits()) return false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!digits()) return false;
    }
    return pos_ > start;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  bool too_deep_ = false;
};

}  // namespace

JsonDataField read_json_data_field(std::string_view body) { return Scanner(body).run(); }

}  // namespace lull::net
