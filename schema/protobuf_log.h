#pragma once
// protobuf logs some refusals itself ("[libprotobuf ERROR ...] String field
// ... contains invalid UTF-8 data") on stderr, a line before lull's own
// one-line error. lull installs one log handler for the process: inside a
// ProtobufLogCapture its messages are kept for the reader's error message;
// outside one they go to stderr as a single "lull: protobuf: ..." line.
#include <string>

namespace lull {

// Collects protobuf's log messages on this thread while alive (scopes nest).
class ProtobufLogCapture {
 public:
  ProtobufLogCapture();
  ~ProtobufLogCapture();
  ProtobufLogCapture(const ProtobufLogCapture&) = delete;
  ProtobufLogCapture& operator=(const ProtobufLogCapture&) = delete;

  // The messages so far, "; "-joined, one line ("" when none).
  const std::string& text() const { return text_; }
  void append(const std::string& message);  // the handler's: one message, made one line

 private:
  std::string text_;
  ProtobufLogCapture* outer_;
};

// Installs the handler (idempotent; every ProtobufLogCapture does it too).
void route_protobuf_log();

}  // namespace lull
