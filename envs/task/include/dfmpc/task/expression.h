// A formula of a task file (a reward, a success test, a cost term), parsed
// once by muParser and evaluated at one point or at many in one call.
//
// A formula reads the variables named at construction (names of letters,
// digits, '_' and '.', such as `velocity` or `action.torque`) and may use
// muParser's operators and functions (+ - * / ^, comparisons, && ||,
// `condition ? a : b`, sin cos tan asin acos atan sinh cosh tanh log ln log2
// log10 exp sqrt abs sign rint, and min max sum avg of any number of
// arguments; constants _pi, _e and inf) plus dm_control's
//   tolerance(x, lower, upper, margin, sigmoid, value_at_margin)
// (dfmpc/task/tolerance.h), whose sigmoid is one of sigmoid.gaussian,
// sigmoid.hyperbolic, sigmoid.long_tail, sigmoid.reciprocal, sigmoid.cosine,
// sigmoid.linear, sigmoid.quadratic, sigmoid.tanh_squared. Line breaks
// count as spaces. A formula may name its intermediate values,
// comma-separated, the last one its value:
//   gap = (energy - 4.905) / 9.81, max(-gap, 0.5 * gap)
//
// Not thread-safe: evaluating writes the variables' storage and the parser's
// stack, so each thread needs its own, or a lock.
#ifndef DFMPC_TASK_EXPRESSION_H_
#define DFMPC_TASK_EXPRESSION_H_

#include <memory>
#include <string>
#include <vector>

namespace dfmpc::task {

class Expression {
 public:
  // `where` names the formula in messages ("FILE: cost[2].expression").
  // Throws std::invalid_argument "WHERE: ..." for a syntax error, an unknown
  // variable or function (with the known variables), a function given the
  // wrong number of arguments, or a variable named like a constant.
  Expression(const std::string& text, std::vector<std::string> variables, const std::string& where);
  ~Expression();
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;

  const std::string& text() const;
  const std::string& where() const;
  const std::vector<std::string>& variables() const;
  // Whether the formula reads variable `index`; the others need no value.
  bool Reads(int index) const;

  // At one point: `values[i]` is variable i's value (read where Reads(i)).
  double Evaluate(const double* values);

  // At `count` points in one call: after Reserve(count), write variable i's
  // value at point j to Column(i)[j] for every variable it reads, then
  // EvaluateColumns. The formula is compiled once (to muParser's bytecode)
  // and run point by point, about 80 ns a point for the pendulum's energy.
  void Reserve(int count);
  double* Column(int index);
  void EvaluateColumns(int count, double* results);

  // Evaluate(values), or throws std::invalid_argument naming the formula,
  // its value and the point when that value is NaN or infinite (with why,
  // where a function was given arguments outside its domain). A task checks
  // its formulas so at load, at a few points its features can take.
  double Probe(const double* values);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfmpc::task

#endif  // DFMPC_TASK_EXPRESSION_H_
