// The planner's options as one table. Each option has one key: the task
// file's [planner] key, the Python keyword, and with '-' for '_' the CLI
// flag. The task file reader, PlannerOptions::Validate, the CLI flags, the
// Python keywords and docs/planner_options.md are all made from this table,
// so an option exists everywhere under the same name or nowhere.
//
// A caller changes options with PlannerOverrides: only the keys it names
// change, over the options the model's task file tunes.
#ifndef DFMPC_PLANNER_OPTION_TABLE_H_
#define DFMPC_PLANNER_OPTION_TABLE_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace dfmpc::task {
struct TaskSpec;
}  // namespace dfmpc::task

namespace dfmpc::planner {

struct PlannerOptions;

// One option's value as a caller, a task file or a command line gives it.
// Converts implicitly from the value, so that {"seed", 3} reads as written.
class OptionValue {
 public:
  using Variant = std::variant<bool, std::int64_t, double, std::string>;

  OptionValue(bool value) : value_(value) {}  // NOLINT(runtime/explicit)
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  OptionValue(T value) : value_(static_cast<std::int64_t>(value)) {}  // NOLINT(runtime/explicit)
  OptionValue(double value) : value_(value) {}                        // NOLINT(runtime/explicit)
  OptionValue(const char* value) : value_(std::string(value)) {}      // NOLINT(runtime/explicit)
  OptionValue(std::string value) : value_(std::move(value)) {}        // NOLINT(runtime/explicit)

  const Variant& value() const { return value_; }
  // As a task file would write it: true, 8, 0.05, "mppi".
  std::string ToString() const;

 private:
  Variant value_;
};

enum class OptionKind { kFlag, kInteger, kNumber, kText };

struct OptionDescriptor {
  const char* key;
  OptionKind kind;
  const char* doc;  // one line
  // Integer and number options: the allowed range, each end open or closed.
  double min, max;
  bool min_open, max_open;
  // Text options with a fixed set of values (mode, selection); empty: any text.
  std::vector<std::string> choices;
  // Older spellings the command line and Python still accept.
  std::vector<std::string> aliases;
  // The command-line flag, without "--": the key with '-' for '_', unless
  // the commands' own flags hold that name (seed, threads).
  std::string flag;
  // Whether a task file's [planner] table may set it (seed, threads and the
  // device belong to the caller's machine and run, not to the task).
  bool per_task;
  std::function<OptionValue(const PlannerOptions&)> get;
  // Sets a value already converted to `kind` (ConvertOptionValue).
  std::function<void(PlannerOptions&, const OptionValue&)> set;

  // "1 <= x", "[0, 1)", "warm or replan", "any": for messages and docs.
  std::string RangeText() const;
  // The value in a default PlannerOptions, as a task file would write it.
  std::string DefaultText() const;
};

// Every option, in the order the docs list them.
const std::vector<OptionDescriptor>& PlannerOptionTable();

// The option named `key` or one of its aliases. Throws
// std::invalid_argument naming the key and the closest known one otherwise.
const OptionDescriptor& FindPlannerOption(const std::string& key);

// `value` as `option` holds it: an integer where a number is expected
// becomes one; a value of another kind, out of range or not among the
// choices throws std::invalid_argument naming the option.
OptionValue ConvertOptionValue(const OptionDescriptor& option, const OptionValue& value);
// `text` (a command line's) parsed as `option`'s kind and checked the same way.
OptionValue ParseOptionValue(const OptionDescriptor& option, const std::string& text);

// Options a caller changes, by key; the others keep the values they had
// (for Planner::FromFile: the model's task file's tuned options).
class PlannerOverrides {
 public:
  PlannerOverrides() = default;
  // Each pair as Set; throws as Set does.
  PlannerOverrides(  // NOLINT(runtime/explicit)
      std::initializer_list<std::pair<std::string, OptionValue>> values);

  // Sets `key` (or an alias) to `value`, converted and checked as
  // ConvertOptionValue does; a key set twice keeps the later value. Throws
  // std::invalid_argument for an unknown key or a bad value.
  PlannerOverrides& Set(const std::string& key, const OptionValue& value);
  bool Has(const std::string& key) const;
  bool empty() const { return values_.empty(); }
  // Canonical key and value, in the order first set.
  const std::vector<std::pair<std::string, OptionValue>>& values() const { return values_; }
  void ApplyTo(PlannerOptions& options) const;

 private:
  std::vector<std::pair<std::string, OptionValue>> values_;
};

// The options a task file's [planner] table sets, as overrides. Throws
// std::invalid_argument naming the file and key of an unknown option, a
// per-machine one (seed, threads, device...) or a bad value.
PlannerOverrides TaskFileOverrides(const task::TaskSpec& task);

// Where a resolved option's value came from (ResolvePlannerOptions).
enum class OptionSource { kDefault, kTaskFile, kModel, kCaller };
const char* OptionSourceName(OptionSource source);

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_OPTION_TABLE_H_
