#pragma once
// Progress on stderr that suits where stderr goes: on a terminal, one line
// rewritten in place with '\r'; in a log file or pipe, no carriage returns,
// only a plain line per step (transient updates are dropped).
#include <iosfwd>
#include <string>

namespace lull::cli {

class ProgressLine {
 public:
  // `terminal` defaults to whether stderr is a tty.
  explicit ProgressLine(std::ostream& err);
  ProgressLine(std::ostream& err, bool terminal);

  // A transient update (e.g. every few samples): terminal only.
  void update(const std::string& text);
  // The end of a step: rewritten in place on a terminal, a line elsewhere.
  void step(const std::string& text);
  // A line that stays (a result): ends any in-place line first.
  void line(const std::string& text);
  // Keeps the in-place line now on screen (ends it with a newline); nothing in a log.
  void finish();

 private:
  std::ostream& err_;
  bool terminal_;
  std::size_t shown_ = 0;  // length of the in-place line now on screen
};

}  // namespace lull::cli
