// The Runs panel's filter line. A filter is a list of terms; all must hold, and "or" / "||" separates
// alternatives (each an "and" of terms; no parentheses):
//     mohd x2                          bare words: case-insensitive substrings of the run's text
//     model.dim>=384 status=finished   FIELD OP VALUE, OP one of = == != < <= > >= ~ (~ = contains)
//     ppl/val/all < 300 or tag=best
// FIELD is resolved by the caller (id, name, status, a dotted config key, a result key, ...). Values
// compare as numbers when both sides parse as numbers, else as text (= and != exact, ~ ignoring case).
// A term whose field the run lacks is false. Values may be quoted ("a b"). Empty filter = every run.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace moxlab::viewer {

class RunFilterExpr {
 public:
  // Throws moxlab::Error naming the problem ("filter: operator '>=' needs a value") on bad syntax.
  static RunFilterExpr parse(const std::string& text);

  using Lookup = std::function<std::optional<std::string>(const std::string& field)>;
  // text: what bare words search in; lookup: a field's value as text, nullopt when absent.
  bool matches(const std::string& text, const Lookup& lookup) const;
  bool empty() const { return alternatives_.empty(); }

 private:
  struct Term {
    std::string field, op, value;  // op empty: bare word in value
  };
  std::vector<std::vector<Term>> alternatives_;
  static bool holds(const Term& term, const std::string& text, const Lookup& lookup);
};

}  // namespace moxlab::viewer
