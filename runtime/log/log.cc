// lull's log over spdlog: spdlog's sinks (thread-safe, stderr, files,
// periodic flush) and levels; the line's text is line_format.h's.
#include "runtime/log/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "runtime/log/line_format.h"
#include "runtime/log/log_settings.h"

namespace lull::log {

namespace {

// The syslog priority journald reads from a "<N>" line prefix (sd-daemon(3)).
int syslog_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return 7;
    case spdlog::level::info:
      return 6;
    case spdlog::level::warn:
      return 4;
    case spdlog::level::err:
      return 3;
    default:
      return 2;
  }
}

// A line: "TIME LEVEL NAME: MESSAGE", or {"time","level","logger","message"};
// with `journal`, "<N>" first, so that `journalctl -p warning` filters by level.
class LineFormatter : public spdlog::formatter {
 public:
  LineFormatter(Format format, bool journal) : format_(format), journal_(journal) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string time = utc_timestamp(msg.time);
    const auto level_name = spdlog::level::to_string_view(msg.level);
    const std::string_view level(level_name.data(), level_name.size());
    const std::string_view name(msg.logger_name.data(), msg.logger_name.size());
    const std::string_view text(msg.payload.data(), msg.payload.size());
    std::string line = journal_ ? "<" + std::to_string(syslog_priority(msg.level)) + ">" : "";
    if (format_ == Format::kJson)
      line += "{\"time\":\"" + time + "\",\"level\":\"" + std::string(level) + "\",\"logger\":" + json_string(name) +
              ",\"message\":" + json_string(text) + "}\n";
    else
      line += time + " " + std::string(level) + " " + std::string(name) + ": " + one_line_message(text) + "\n";
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LineFormatter>(format_, journal_);
  }

 private:
  // A message never spans lines (an exception's text may hold a newline).
  static std::string one_line_message(std::string_view text) {
    std::string out(text);
    for (char& c : out)
      if (c == '\n' || c == '\r') c = ' ';
    return out;
  }
  Format format_;
  bool journal_;
};

// True when stderr is the journal's stream: systemd sets $JOURNAL_STREAM to
// its "DEVICE:INODE" (systemd.exec(5)); a redirected stderr does not match.
bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct stat st {};
  if (!stream || fstat(STDERR_FILENO, &st) != 0) return false;
  unsigned long long dev = 0, ino = 0;
  return std::sscanf(stream, "%llu:%llu", &dev, &ino) == 2 && dev == static_cast<unsigned long long>(st.st_dev) &&
         ino == static_cast<unsigned long long>(st.st_ino);
}

// The access log's line is made whole by line_format.h.
class MessageOnly : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    dest.append(msg.payload.data(), msg.payload.data() + msg.payload.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<MessageOnly>(); }
};

struct State {
  std::mutex mu;  // the loggers are replaced under it; a line copies the pointer
  std::string name = "lull";
  Format format = Format::kPlain;
  std::shared_ptr<spdlog::logger> main;
  std::shared_ptr<spdlog::logger> access;
  std::atomic<int> level{static_cast<int>(Level::kInfo)};
  std::atomic<bool> access_on{false};
  std::atomic<bool> access_json{false};
};

State& state() {
  static State s;
  return s;
}

std::shared_ptr<spdlog::logger> make_main(const std::string& name, Format format) {
  auto logger = std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(std::make_unique<LineFormatter>(format, stderr_is_journal()));
  logger->set_level(spdlog::level::trace);  // the facade filters (one atomic load)
  logger->flush_on(spdlog::level::trace);   // stderr: every line at once (journald, a terminal)
  return logger;
}

std::shared_ptr<spdlog::logger> main_logger() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.main) s.main = make_main(s.name, s.format);
  return s.main;
}

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::kTrace:
      return spdlog::level::trace;
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kOff:
      break;
  }
  return spdlog::level::off;
}

void vlog(Level level, const char* format, va_list args) {
  if (!enabled(level)) return;
  char small[512];
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(small, sizeof small, format, copy);
  va_end(copy);
  if (n < 0) return;
  std::string text;
  if (static_cast<std::size_t>(n) < sizeof small) {
    text.assign(small, static_cast<std::size_t>(n));
  } else {
    text.resize(static_cast<std::size_t>(n) + 1);
    std::vsnprintf(text.data(), text.size(), format, args);
    text.resize(static_cast<std::size_t>(n));
  }
  write(level, text);
}

}  // namespace

bool enabled(Level level) {
  return level != Level::kOff && static_cast<int>(level) >= state().level.load(std::memory_order_relaxed);
}

void write(Level level, const std::string& message) {
  if (!enabled(level)) return;
  main_logger()->log(to_spdlog(level), "{}", message);
}

#define LULL_LOG_AT(fn, level)       \
  void fn(const char* format, ...) { \
    if (!enabled(level)) return;     \
    va_list args;                    \
    va_start(args, format);          \
    vlog(level, format, args);       \
    va_end(args);                    \
  }
LULL_LOG_AT(trace, Level::kTrace)
LULL_LOG_AT(debug, Level::kDebug)
LULL_LOG_AT(info, Level::kInfo)
LULL_LOG_AT(warn, Level::kWarn)
LULL_LOG_AT(error, Level::kError)
#undef LULL_LOG_AT

bool access_enabled() { return state().access_on.load(std::memory_order_relaxed); }

void access(const AccessRecord& record) {
  State& s = state();
  if (!access_enabled()) return;
  std::shared_ptr<spdlog::logger> logger;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    logger = s.access;
  }
  if (logger) logger->info("{}", access_line(record, std::chrono::system_clock::now(), s.access_json.load()));
}

Level parse_level(const std::string& text) {
  static const std::pair<const char*, Level> kLevels[] = {
      {"trace", Level::kTrace},  {"debug", Level::kDebug}, {"info", Level::kInfo}, {"warn", Level::kWarn},
      {"warning", Level::kWarn}, {"error", Level::kError}, {"off", Level::kOff}};
  for (const auto& [name, level] : kLevels)
    if (text == name) return level;
  throw std::invalid_argument("'" + text + "' is not a log level (trace, debug, info, warn, error, off)");
}

Format parse_format(const std::string& text) {
  if (text == "plain") return Format::kPlain;
  if (text == "json") return Format::kJson;
  throw std::invalid_argument("'" + text + "' is not a log format (plain, json)");
}

void set_name(const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.name = name;
  s.main = make_main(s.name, s.format);
}

void configure(const Settings& settings) {
  State& s = state();
  std::shared_ptr<spdlog::logger> access;
  if (!settings.access_log.empty()) {
    std::shared_ptr<spdlog::sinks::sink> sink;
    if (settings.access_log == "-") {
      sink = std::make_shared<spdlog::sinks::stdout_sink_mt>();
    } else {
      // spdlog would make missing folders; a path with a typo is refused instead.
      const std::filesystem::path folder = std::filesystem::path(settings.access_log).parent_path();
      std::error_code ec;
      if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
        throw std::invalid_argument("--access-log " + settings.access_log + ": no folder " + folder.string());
      try {
        sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(settings.access_log, false);  // appends
      } catch (const spdlog::spdlog_ex&) {
        throw std::invalid_argument("--access-log " + settings.access_log + ": cannot open the file for appending");
      }
    }
    access = std::make_shared<spdlog::logger>("access", sink);
    access->set_formatter(std::make_unique<MessageOnly>());
    if (settings.access_log == "-") access->flush_on(spdlog::level::info);
  }
  std::lock_guard<std::mutex> lock(s.mu);
  s.format = settings.format;
  s.main = make_main(s.name, s.format);
  s.level = static_cast<int>(settings.level);
  if (s.access) spdlog::drop("access");
  s.access = access;
  s.access_json = settings.format == Format::kJson;
  s.access_on = static_cast<bool>(access);
  // A file is written in blocks: a line per response would be a system call each.
  if (access && settings.access_log != "-") {
    spdlog::register_logger(access);
    // spdlog's flush thread takes no signal: the command's signal handling
    // (SIGHUP reloads) may not have blocked them yet, and a signal the
    // kernel picked this thread for would take its default action.
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &before);
    spdlog::flush_every(std::chrono::seconds(1));
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
  }
}

void flush() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.access) s.access->flush();
  if (s.main) s.main->flush();
}

}  // namespace lull::log
