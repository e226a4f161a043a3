#pragma once
// The checks of numeric command-line options. Limits come from
// schema/input_limits.h; every refusal is a UsageError (or a Boost parse
// error parse_command_line turns into one): one line naming the flag, exit 2.
#include <boost/program_options.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace lull::cli {

// The value must be finite and within [lo, hi]: "--flag: must be in lo..hi (got v)".
void check_range(const std::string& flag, double value, double lo, double hi);
// The same with lo excluded (durations, rates: > 0).
void check_positive_range(const std::string& flag, double value, double hi);

// Unsigned options. Boost reads "-1" into an unsigned option as its largest
// value (a body cap of -1 is no cap at all), so every unsigned flag is declared
// with ranged_value: its text must be a whole number without a sign, within
// [lo, hi]. parse_command_line refuses to run a command that declares an
// unsigned option any other way (is_unsigned_option without RangedOption).
struct RangedOption {
  virtual ~RangedOption() = default;
};

// "--flag: must be a whole number in lo..hi (got TEXT)"; hi = max: ">= lo".
std::string unsigned_range_text(std::uintmax_t lo, std::uintmax_t hi);
// Whether `text` is a whole number in [lo, hi] with no sign (spaces around allowed).
bool unsigned_text_in_range(const std::string& text, std::uintmax_t lo, std::uintmax_t hi);

template <class T>
class RangedValue : public boost::program_options::typed_value<T>, public RangedOption {
 public:
  RangedValue(T* store, T lo, T hi) : boost::program_options::typed_value<T>(store), lo_(lo), hi_(hi) {}
  void xparse(boost::any& value_store, const std::vector<std::string>& tokens) const override {
    for (const auto& t : tokens)
      if (!unsigned_text_in_range(t, lo_, hi_)) {
        // Boost fills in the flag's spelling on the way out (store()).
        boost::program_options::error_with_option_name e(
            "%canonical_option%: must be a whole number " + unsigned_range_text(lo_, hi_) + " (got '%value%')", "", t);
        e.set_substitute("value", t);
        throw e;
      }
    boost::program_options::typed_value<T>::xparse(value_store, tokens);
  }

 private:
  T lo_, hi_;
};

template <class T>
RangedValue<T>* ranged_value(T* store, T lo = 0, T hi = std::numeric_limits<T>::max()) {
  static_assert(std::is_unsigned_v<T>, "ranged_value is for unsigned options; signed ones use check_range");
  return new RangedValue<T>(store, lo, hi);
}

// Whether an option stores an unsigned integer (or a list of them).
bool is_unsigned_option(const boost::program_options::value_semantic* semantic);

}  // namespace lull::cli
