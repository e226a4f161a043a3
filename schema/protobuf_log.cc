// See protobuf_log.h.
#include "schema/protobuf_log.h"

#include <google/protobuf/stubs/logging.h>

#include <iostream>
#include <mutex>

namespace lull {
namespace {

thread_local ProtobufLogCapture* t_capture = nullptr;

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

void handle(google::protobuf::LogLevel level, const char*, int, const std::string& message) {
  if (t_capture) {
    t_capture->append(message);
    return;
  }
  if (level < google::protobuf::LOGLEVEL_WARNING) return;
  std::cerr << "lull: protobuf: " + one_line(message) + "\n";
}

}  // namespace

void ProtobufLogCapture::append(const std::string& message) {
  if (!text_.empty()) text_ += "; ";
  text_ += one_line(message);
}

void route_protobuf_log() {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(&handle); });
}

ProtobufLogCapture::ProtobufLogCapture() : outer_(t_capture) {
  route_protobuf_log();
  t_capture = this;
}

ProtobufLogCapture::~ProtobufLogCapture() { t_capture = outer_; }

}  // namespace lull
