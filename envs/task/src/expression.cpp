#include "dfmpc/task/expression.h"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "dfmpc/task/tolerance.h"

namespace dfmpc::task {
namespace {

constexpr char kNameCharacters[] =
    "0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.";

// Why the last function call on this thread gave NaN; empty if none did.
thread_local std::string domain_error;

// Arguments outside the domain give NaN, as sqrt(-1) does, and the reason
// waits in `domain_error` for Probe, which refuses what is not finite.
double ToleranceFunction(double x, double lower, double upper, double margin, double sigmoid,
                         double value_at_margin) {
  const std::vector<std::string>& names = SigmoidNames();
  if (!(sigmoid >= 0.0 && sigmoid < static_cast<double>(names.size())) ||
      sigmoid != std::floor(sigmoid)) {
    std::string known;
    for (const std::string& name : names)
      known += (known.empty() ? "sigmoid." : ", sigmoid.") + name;
    domain_error = "tolerance: the sigmoid (argument 5) must be one of " + known;
    return std::numeric_limits<double>::quiet_NaN();
  }
  try {
    return Tolerance(x, lower, upper, margin, static_cast<Sigmoid>(static_cast<int>(sigmoid)),
                     value_at_margin);
  } catch (const std::invalid_argument& error) {
    domain_error = error.what();
    return std::numeric_limits<double>::quiet_NaN();
  }
}

// The constants a formula may name: the sigmoids of tolerance(), as
// `sigmoid.NAME` (qualified, so that a misspelt variable never reads one),
// and `inf`, for one-sided bounds.
std::vector<std::pair<std::string, double>> Constants() {
  std::vector<std::pair<std::string, double>> constants;
  const std::vector<std::string>& sigmoids = SigmoidNames();
  for (size_t i = 0; i < sigmoids.size(); ++i) {
    constants.emplace_back("sigmoid." + sigmoids[i], static_cast<double>(i));
  }
  constants.emplace_back("inf", std::numeric_limits<double>::infinity());
  return constants;
}

bool IsConstant(const std::string& name) {
  for (const auto& [constant, value] : Constants()) {
    if (constant == name) return true;
  }
  return false;
}

bool IsNameCharacter(char c) { return c != 0 && std::strchr(kNameCharacters, c) != nullptr; }

bool IsName(const std::string& name) {
  return !name.empty() && name.find_first_not_of(kNameCharacters) == std::string::npos &&
         !std::isdigit(static_cast<unsigned char>(name[0])) && name[0] != '.';
}

std::string Joined(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

// Levenshtein distance, for "did you mean".
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The names a formula assigns (`gap = ..., max(-gap, 0)`): every maximal
// name followed by '=' but not by "==".
std::vector<std::string> AssignedNames(const std::string& text) {
  std::vector<std::string> names;
  size_t i = 0;
  while (i < text.size()) {
    if (!IsNameCharacter(text[i])) {
      ++i;
      continue;
    }
    const size_t end = std::min(text.find_first_not_of(kNameCharacters, i), text.size());
    const std::string name = text.substr(i, end - i);
    const size_t next = text.find_first_not_of(' ', end);
    const bool assigned = next != std::string::npos && text[next] == '=' &&
                          (next + 1 == text.size() || text[next + 1] != '=');
    if (assigned && IsName(name) && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
    i = end;
  }
  return names;
}

}  // namespace

struct Expression::Impl {
  std::string text;
  std::string where;
  std::vector<std::string> variables;
  std::vector<bool> reads;
  // Names the formula assigns, stored after the variables.
  std::vector<std::string> locals;
  mu::Parser parser;
  // What the parser reads: variable i (then the locals) at slots[i].
  std::vector<double> slots;
  std::vector<int> read;  // the variables it reads, in order
  // Variable i's values at points 0..capacity-1 from columns[i * capacity].
  std::vector<double> columns;
  int capacity = 0;
  // Names the formula uses that are not variables, found while parsing.
  std::vector<std::string> unknown;
  std::deque<double> unknown_slots;

  [[noreturn]] void Fail(const std::string& message) const {
    throw std::invalid_argument(where + ": " + message);
  }

  static double* AddUnknown(const char* name, void* self) {
    Impl* impl = static_cast<Impl*>(self);
    impl->unknown.emplace_back(name);
    return &impl->unknown_slots.emplace_back(0.0);
  }

  void Bind() {
    slots.assign(variables.size() + locals.size(), 0.0);
    for (size_t i = 0; i < variables.size(); ++i) parser.DefineVar(variables[i], &slots[i]);
    for (size_t i = 0; i < locals.size(); ++i) {
      parser.DefineVar(locals[i], &slots[variables.size() + i]);
    }
  }

  // The message for a name that is neither a variable nor a function.
  std::string UnknownName(const std::string& name) const {
    // Its first use as a whole word.
    size_t at = text.find(name);
    const auto is_name_character = [this](size_t i) {
      return i < text.size() && IsNameCharacter(text[i]);
    };
    while (at != std::string::npos &&
           ((at > 0 && is_name_character(at - 1)) || is_name_character(at + name.size()))) {
      at = text.find(name, at + 1);
    }
    const size_t after = at == std::string::npos ? text.size() : at + name.size();
    const size_t next = text.find_first_not_of(' ', after);
    const bool called = next != std::string::npos && text[next] == '(';
    std::string message =
        std::string("unknown ") + (called ? "function" : "variable") + " '" + name + "'";
    if (!called) {
      // A name it qualifies ("torque" for "action.torque"), one it extends
      // or shortens ("cosine" for "cos"), else the nearest spelling.
      std::string closest;
      size_t best = std::max<size_t>(2, name.size() / 3) + 1;
      for (const std::string& variable : variables) {
        const bool qualifies =
            variable.size() > name.size() &&
            variable.compare(variable.size() - name.size() - 1, std::string::npos, "." + name) == 0;
        const size_t shorter = std::min(name.size(), variable.size());
        const bool extends = shorter >= 3 && name.compare(0, shorter, variable, 0, shorter) == 0;
        const size_t distance = qualifies ? 0 : extends ? 1 : EditDistance(name, variable);
        if (distance < best) best = distance, closest = variable;
      }
      if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
      message += "; the variables are " + Joined(variables);
    }
    return message;
  }
};

Expression::Expression(const std::string& text, std::vector<std::string> variables,
                       const std::string& where)
    : impl_(std::make_unique<Impl>()) {
  Impl& x = *impl_;
  x.text = text;
  std::replace_if(
      x.text.begin(), x.text.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; },
      ' ');
  x.where = where;
  x.variables = std::move(variables);
  if (x.text.find_first_not_of(' ') == std::string::npos) x.Fail("the formula is empty");
  std::vector<std::string> sorted = x.variables;
  std::sort(sorted.begin(), sorted.end());
  const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  if (twice != sorted.end()) x.Fail("'" + *twice + "' names two variables");
  for (const std::string& name : x.variables) {
    if (!IsName(name)) {
      x.Fail("'" + name + "' cannot be read in a formula: name features, actuators and " +
             "quantities with letters, digits, '_' and '.' only");
    }
    if (IsConstant(name)) x.Fail("'" + name + "' names a constant of formulas; rename it");
  }
  for (const std::string& name : AssignedNames(x.text)) {
    if (std::find(x.variables.begin(), x.variables.end(), name) != x.variables.end()) {
      x.Fail("assigns to '" + name + "', which is a variable: name the value otherwise");
    }
    if (!IsConstant(name)) x.locals.push_back(name);
  }
  try {
    x.parser.DefineNameChars(kNameCharacters);
    x.parser.DefineFun("tolerance", ToleranceFunction);
    for (const auto& [name, value] : Constants()) x.parser.DefineConst(name, value);
    x.parser.SetVarFactory(&Impl::AddUnknown, impl_.get());
    x.Bind();
    x.parser.SetExpr(x.text);
    const mu::varmap_type used = x.parser.GetUsedVar();
    if (!x.unknown.empty()) x.Fail(x.UnknownName(x.unknown.front()));
    x.reads.assign(x.variables.size(), false);
    for (size_t i = 0; i < x.variables.size(); ++i) {
      x.reads[i] = used.count(x.variables[i]) > 0;
      if (x.reads[i]) x.read.push_back(static_cast<int>(i));
    }
  } catch (const mu::Parser::exception_type& error) {
    if (!x.unknown.empty()) x.Fail(x.UnknownName(x.unknown.front()));
    x.Fail(error.GetMsg());
  }
}

Expression::~Expression() = default;
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;

const std::string& Expression::text() const { return impl_->text; }
const std::string& Expression::where() const { return impl_->where; }
const std::vector<std::string>& Expression::variables() const { return impl_->variables; }
bool Expression::Reads(int index) const { return impl_->reads.at(index); }

void Expression::Reserve(int count) {
  Impl& x = *impl_;
  if (count <= x.capacity) return;
  x.capacity = std::max(count, 2 * x.capacity);
  x.columns.assign(x.variables.size() * x.capacity, 0.0);
}

double* Expression::Column(int index) {
  Impl& x = *impl_;
  if (index < 0 || index >= static_cast<int>(x.variables.size())) {
    throw std::out_of_range(x.where + ": no variable " + std::to_string(index));
  }
  return x.columns.data() + static_cast<size_t>(index) * x.capacity;
}

void Expression::EvaluateColumns(int count, double* results) {
  if (count > impl_->capacity) {
    throw std::out_of_range(impl_->where + ": " + std::to_string(count) + " points, room for " +
                            std::to_string(impl_->capacity));
  }
  // Point by point through the compiled formula: muParser's bulk mode, as
  // Debian builds it, runs an OpenMP region that sets the caller's thread
  // count, and took 3x as long per point (230 against 78 ns for the
  // pendulum's energy at 264 points).
  Impl& x = *impl_;
  for (int j = 0; j < count; ++j) {
    for (const int i : x.read) x.slots[i] = x.columns[static_cast<size_t>(i) * x.capacity + j];
    results[j] = x.parser.Eval();
  }
}

double Expression::Evaluate(const double* values) {
  Impl& x = *impl_;
  for (const int i : x.read) x.slots[i] = values[i];
  return x.parser.Eval();
}

double Expression::Probe(const double* values) {
  domain_error.clear();
  const double value = Evaluate(values);
  if (std::isfinite(value)) return value;
  const Impl& x = *impl_;
  std::ostringstream message;
  message << "gives " << (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf") << " at ";
  std::string point;
  for (size_t i = 0; i < x.variables.size(); ++i) {
    if (!x.reads[i]) continue;
    std::ostringstream one;
    one << x.variables[i] << " = " << values[i];
    point += (point.empty() ? "" : ", ") + one.str();
  }
  message << (point.empty() ? "every point" : point);
  if (!domain_error.empty()) message << " (" << domain_error << ")";
  x.Fail(message.str());
}

}  // namespace dfmpc::task
