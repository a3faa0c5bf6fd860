// Checks on command-line values, for CLI11's `->check(...)`: a number must parse completely, be finite
// and lie in its range, so "nan", "1e400", "12abc" or an int overflow never reach the code behind a
// flag. CLI11 prefixes the flag, so a failure reads "--temperature: must be a number in [0, 100], got
// 'nan'". Header-only: moxlab and moxlab-viewer both use it.
#pragma once
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

namespace moxlab::cli {

namespace detail {
inline std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// The whole text as a finite double / as a decimal integer without overflow.
inline bool parse_number(const std::string& text, double& v) {
  char* end = nullptr;
  errno = 0;
  v = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && errno != ERANGE && std::isfinite(v);
}
inline bool parse_integer(const std::string& text, long long& v) {
  char* end = nullptr;
  errno = 0;
  v = std::strtoll(text.c_str(), &end, 10);
  return !text.empty() && end == text.c_str() + text.size() && errno != ERANGE;
}
}  // namespace detail

// A finite decimal number in [min, max].
inline CLI::Validator number_in(double min, double max) {
  const std::string range = "[" + detail::number_text(min) + ", " + detail::number_text(max) + "]";
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        double v = 0;
        if (!detail::parse_number(text, v) || v < min || v > max)
          return "must be a number in " + range + ", got '" + text + "'";
        return "";
      },
      "in " + range);
}

// A whole number in [min, max] (decimal digits with an optional sign; no fraction or exponent).
inline CLI::Validator integer_in(std::int64_t min, std::int64_t max) {
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        long long v = 0;
        if (!detail::parse_integer(text, v) || v < min || v > max) return "must be an integer in " + range + ", got '" + text + "'";
        return "";
      },
      "in " + range);
}

// `auto`, or a whole number in [min, max].
inline CLI::Validator auto_or_integer_in(std::int64_t min, std::int64_t max) {
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        long long v = 0;
        if (text == "auto" || (detail::parse_integer(text, v) && v >= min && v <= max)) return "";
        return "must be auto or an integer in " + range + ", got '" + text + "'";
      },
      "auto or in " + range);
}

// Common ranges, so the same kind of flag has the same limits everywhere.
inline CLI::Validator positive_count() { return integer_in(1, std::numeric_limits<int>::max()); }
inline CLI::Validator non_negative_count() { return integer_in(0, std::numeric_limits<int>::max()); }
inline CLI::Validator token_count() { return integer_in(1, std::numeric_limits<std::int64_t>::max() / 2); }
inline CLI::Validator thread_count() { return integer_in(0, 4096); }  // 0: all cores

// A run id of the store (ids start at 1). unset_value: the text an option without a value gets
// (CLI11 passes its default_str, e.g. "-1" for `--resume` given alone).
inline CLI::Validator run_id(const std::string& unset_value = "") {
  return CLI::Validator(
      [unset_value](std::string& text) -> std::string {
        long long v = 0;
        if (!unset_value.empty() && text == unset_value) return "";
        if (!detail::parse_integer(text, v) || v < 1) return "must be a run id (a positive integer), got '" + text + "'";
        return "";
      },
      "ID");
}

// A sweep id of the store (ids start at 1).
inline CLI::Validator sweep_id() { return integer_in(1, std::numeric_limits<std::int64_t>::max()); }

// A path argument that must not be empty (an empty --config would silently mean "no file").
inline CLI::Validator non_empty_path() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; }, "");
}

}  // namespace moxlab::cli
