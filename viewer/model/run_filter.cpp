#include "viewer/model/run_filter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/common/error.h"

namespace moxlab::viewer {

namespace {

struct Token {
  enum Kind { word, op, conj, disj } kind;
  std::string text;
};

bool is_op_char(char c) { return c == '=' || c == '!' || c == '<' || c == '>' || c == '~'; }

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '"') {
      const std::size_t close = s.find('"', i + 1);
      require(close != std::string::npos, "filter: unterminated quote");
      out.push_back({Token::word, s.substr(i + 1, close - i - 1)});
      i = close + 1;
    } else if (s.compare(i, 2, "&&") == 0) {
      out.push_back({Token::conj, "&&"});
      i += 2;
    } else if (s.compare(i, 2, "||") == 0) {
      out.push_back({Token::disj, "||"});
      i += 2;
    } else if (is_op_char(c)) {
      std::size_t j = i;
      while (j < s.size() && is_op_char(s[j])) ++j;
      const std::string op = s.substr(i, j - i);
      static const char* const known[] = {"=", "==", "!=", "<", "<=", ">", ">=", "~"};
      require(std::find(std::begin(known), std::end(known), op) != std::end(known), "filter: unknown operator '" + op + "'");
      out.push_back({Token::op, op == "==" ? "=" : op});
      i = j;
    } else {
      std::size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])) && !is_op_char(s[j]) && s[j] != '"' &&
             s.compare(j, 2, "&&") != 0 && s.compare(j, 2, "||") != 0)
        ++j;
      std::string w = s.substr(i, j - i);
      if (w == "and") out.push_back({Token::conj, w});
      else if (w == "or") out.push_back({Token::disj, w});
      else out.push_back({Token::word, w});
      i = j;
    }
  }
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<double> as_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

RunFilterExpr RunFilterExpr::parse(const std::string& text) {
  RunFilterExpr expr;
  const auto tokens = tokenize(text);
  std::vector<Term> current;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.kind == Token::conj) continue;  // "and" is implied between terms
    if (t.kind == Token::disj) {
      require(!current.empty(), "filter: '" + t.text + "' needs a term on each side");
      expr.alternatives_.push_back(std::move(current));
      current.clear();
      continue;
    }
    if (t.kind == Token::op) throw Error("filter: operator '" + t.text + "' needs a field before it");
    if (i + 1 < tokens.size() && tokens[i + 1].kind == Token::op) {
      const std::string op = tokens[i + 1].text;
      require(i + 2 < tokens.size() && tokens[i + 2].kind == Token::word, "filter: operator '" + op + "' needs a value");
      current.push_back({t.text, op, tokens[i + 2].text});
      i += 2;
    } else {
      current.push_back({"", "", t.text});
    }
  }
  if (!current.empty()) expr.alternatives_.push_back(std::move(current));
  else require(expr.alternatives_.empty(), "filter: 'or' needs a term on each side");
  return expr;
}

bool RunFilterExpr::holds(const Term& term, const std::string& text, const Lookup& lookup) {
  if (term.op.empty()) return lower(text).find(lower(term.value)) != std::string::npos;
  const auto value = lookup(term.field);
  if (!value) return false;
  if (term.op == "~") return lower(*value).find(lower(term.value)) != std::string::npos;
  const auto a = as_number(*value), b = as_number(term.value);
  if ((a && std::isnan(*a)) || (b && std::isnan(*b))) return term.op == "!=";  // NaN equals and orders with nothing
  int cmp;
  if (a && b) cmp = *a < *b ? -1 : *a > *b ? 1 : 0;
  else cmp = value->compare(term.value) < 0 ? -1 : value->compare(term.value) > 0 ? 1 : 0;
  if (term.op == "=") return cmp == 0;
  if (term.op == "!=") return cmp != 0;
  if (term.op == "<") return cmp < 0;
  if (term.op == "<=") return cmp <= 0;
  if (term.op == ">") return cmp > 0;
  return cmp >= 0;  // ">="
}

bool RunFilterExpr::matches(const std::string& text, const Lookup& lookup) const {
  if (alternatives_.empty()) return true;
  for (const auto& all : alternatives_)
    if (std::all_of(all.begin(), all.end(), [&](const Term& t) { return holds(t, text, lookup); })) return true;
  return false;
}

}  // namespace moxlab::viewer
