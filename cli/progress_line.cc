#include "cli/progress_line.h"

#include <unistd.h>

#include <ostream>

namespace lull::cli {

ProgressLine::ProgressLine(std::ostream& err) : ProgressLine(err, isatty(STDERR_FILENO) == 1) {}
ProgressLine::ProgressLine(std::ostream& err, bool terminal) : err_(err), terminal_(terminal) {}

void ProgressLine::update(const std::string& text) {
  if (!terminal_) return;
  // Pad over what the previous, longer line left on screen.
  err_ << '\r' << text << std::string(shown_ > text.size() ? shown_ - text.size() : 0, ' ') << std::flush;
  shown_ = text.size();
}

void ProgressLine::step(const std::string& text) {
  if (terminal_)
    update(text);
  else
    err_ << text << '\n' << std::flush;
}

void ProgressLine::line(const std::string& text) {
  if (terminal_ && shown_ > 0) {
    update(text);
    err_ << '\n' << std::flush;
    shown_ = 0;
    return;
  }
  err_ << text << '\n' << std::flush;
}

void ProgressLine::finish() {
  if (terminal_ && shown_ > 0) err_ << '\n' << std::flush;
  shown_ = 0;
}

}  // namespace lull::cli
