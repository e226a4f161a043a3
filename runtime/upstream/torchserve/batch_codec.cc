// The response is split by a small JSON scanner rather than parsed and
// re-serialized: each query gets its prediction's text exactly as the model
// server wrote it (key order included), and nothing is allocated per token.
#include "runtime/upstream/torchserve/batch_codec.h"

#include <cctype>
#include <cstdlib>

#include "runtime/net/base64.h"
#include "runtime/net/json_value.h"
#include "schema/one_line.h"

namespace lull::torchserve {

namespace {

class Scanner {
 public:
  explicit Scanner(const std::string& s) : s_(s) {}

  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* what) {
    if (!eat(c)) fail(std::string("expected ") + what);
  }
  std::string string_value() {
    ws();
    if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string");
    const size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != '"') i_ += s_[i_] == '\\' ? 2 : 1;
    if (i_ >= s_.size()) fail("unterminated string");
    return s_.substr(start, i_++ - start);
  }
  // Skips one JSON value and returns its text.
  std::string value() {
    ws();
    const size_t start = i_;
    skip_value(0);
    return s_.substr(start, i_ - start);
  }
  bool at_end() {
    ws();
    return i_ == s_.size();
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw BatchCodecError("batch response is not the contract's JSON: " + why + " at byte " + std::to_string(i_));
  }

 private:
  void skip_value(int depth) {
    if (depth > 64) fail("nesting too deep");
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '"') {
      string_value();
    } else if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      if (eat(close)) return;
      do {
        if (c == '{') {
          string_value();
          expect(':', "':'");
        }
        skip_value(depth + 1);
      } while (eat(','));
      expect(close, c == '{' ? "'}'" : "']'");
    } else {
      const size_t start = i_;  // number, true, false, null
      while (i_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' || s_[i_] == '+' || s_[i_] == '.'))
        ++i_;
      if (i_ == start) fail(std::string("unexpected '") + c + "'");
    }
  }

  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

std::string encode_batch_request(const std::vector<const std::string*>& inputs) {
  std::string body = "{\"inputs\":[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) body += ',';
    body += '"';
    body += net::base64_encode(*inputs[i]);
    body += '"';
  }
  body += "]}";
  return body;
}

std::vector<std::string> decode_batch_response(const std::string& body, size_t expected) {
  Scanner sc(body);
  std::vector<std::string> out;
  bool found = false;
  sc.expect('{', "an object");
  if (!sc.eat('}')) {
    do {
      const std::string key = sc.string_value();
      sc.expect(':', "':'");
      if (key == "predictions" && !found) {
        found = true;
        sc.expect('[', "\"predictions\" to be a list");
        if (!sc.eat(']')) {
          do out.push_back(sc.value());
          while (sc.eat(','));
          sc.expect(']', "']'");
        }
      } else {
        sc.value();
      }
    } while (sc.eat(','));
    sc.expect('}', "'}'");
  }
  if (!sc.at_end()) sc.fail("trailing bytes");
  if (!found) throw BatchCodecError("batch response has no \"predictions\" list");
  if (out.size() != expected)
    throw BatchCodecError("batch response has " + std::to_string(out.size()) + " predictions for " +
                          std::to_string(expected) + " inputs");
  return out;
}

int input_error_status(const std::string& prediction, std::string* error_json) {
  // Cheap rejection first: ordinary predictions never pay for a scan.
  const auto first = prediction.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || prediction[first] != '{' || prediction.find("\"error\"") == std::string::npos)
    return 0;
  try {
    Scanner sc(prediction);
    sc.expect('{', "an object");
    if (sc.string_value() != "error") return 0;
    sc.expect(':', "':'");
    std::string inner = sc.value();
    if (!sc.eat('}') || !sc.at_end() || inner.empty() || inner[0] != '{') return 0;  // not the error shape
    int status = 400;
    Scanner in(inner);
    in.expect('{', "an object");
    if (!in.eat('}')) {
      do {
        const std::string key = in.string_value();
        in.expect(':', "':'");
        const std::string v = in.value();
        if (key == "code") {
          char* end = nullptr;
          const long code = std::strtol(v.c_str(), &end, 10);
          if (end && *end == '\0' && code >= 400 && code <= 599) status = static_cast<int>(code);
        }
      } while (in.eat(','));
    }
    *error_json = std::move(inner);
    return status;
  } catch (const BatchCodecError&) {
    return 0;  // an object that merely mentions "error": a prediction like any other
  }
}

std::vector<int> take_input_errors(std::vector<std::string>& predictions) {
  std::vector<int> status;
  for (size_t i = 0; i < predictions.size(); ++i) {
    std::string error_json;
    const int code = input_error_status(predictions[i], &error_json);
    if (code == 0) continue;
    if (status.empty()) status.assign(predictions.size(), 0);
    status[i] = code;
    predictions[i] = std::move(error_json);
  }
  return status;
}

bool is_model_refusal(int status) {
  return status >= 400 && status < 500 && status != 401 && status != 403 && status != 404 && status != 407 &&
         status != 408 && status != 429;
}

std::string refusal_message(const std::string& body) {
  std::string message;
  net::JsonValue doc;
  if (net::parse_json(body, &doc) && doc.kind_case() == net::JsonValue::kStructValue) {
    message = net::json_string(doc, "error");
    if (message.empty()) message = net::json_string(doc, "message");
  }
  if (message.empty()) message = body.empty() ? "(no message)" : body;
  message = one_line(message);
  if (message.size() > 300) message = message.substr(0, 297) + "...";
  return message;
}

std::string refusal_prediction(int status, const std::string& message) {
  return "{\"error\":{\"code\":" + std::to_string(status) +
         ",\"type\":\"InvalidInput\",\"message\":" + net::json_quoted(message) + "}}";
}

}  // namespace lull::torchserve
