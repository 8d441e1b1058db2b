#include "dfmpc/planner/option_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "dfmpc/planner/planner.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::planner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kIntMax = std::numeric_limits<int>::max();

// A range [min, max] with each end open or closed.
struct Range {
  double min = -kInf, max = kInf;
  bool min_open = false, max_open = false;
};
Range AtLeast(double min) { return {min, kInf, false, false}; }
Range Above(double min) { return {min, kInf, true, false}; }
Range HalfOpen(double min, double max) { return {min, max, false, true}; }
Range Closed(double min, double max) { return {min, max, false, false}; }
const Range kAny;

OptionDescriptor Describe(const char* key, OptionKind kind, const Range& range, const char* doc) {
  OptionDescriptor option;
  option.key = key;
  option.kind = kind;
  option.doc = doc;
  option.min = range.min;
  option.max = range.max;
  option.min_open = range.min_open;
  option.max_open = range.max_open;
  option.per_task = true;
  option.flag = key;
  std::replace(option.flag.begin(), option.flag.end(), '_', '-');
  return option;
}

// An option held in a field of PlannerOptions: int, double, bool or text.
template <typename T>
OptionDescriptor Field(const char* key, T PlannerOptions::*field, const Range& range,
                       const char* doc) {
  static_assert(std::is_same_v<T, bool> || std::is_same_v<T, int> || std::is_same_v<T, double> ||
                std::is_same_v<T, std::string>);
  constexpr OptionKind kind = std::is_same_v<T, bool>     ? OptionKind::kFlag
                              : std::is_same_v<T, int>    ? OptionKind::kInteger
                              : std::is_same_v<T, double> ? OptionKind::kNumber
                                                          : OptionKind::kText;
  OptionDescriptor option = Describe(key, kind, range, doc);
  if constexpr (std::is_same_v<T, int>) option.max = std::min(option.max, kIntMax);
  option.get = [field](const PlannerOptions& o) { return OptionValue(o.*field); };
  option.set = [field](PlannerOptions& o, const OptionValue& value) {
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_convertible_v<V, T> &&
                        std::is_same_v<V, std::string> == std::is_same_v<T, std::string>) {
            o.*field = static_cast<T>(v);
          }
        },
        value.value());
  };
  return option;
}

// An option whose field is an enum named by text.
template <typename E>
OptionDescriptor Choice(const char* key, E PlannerOptions::*field, E (*parse)(const std::string&),
                        std::string (*name)(E), std::vector<std::string> choices, const char* doc) {
  OptionDescriptor option = Describe(key, OptionKind::kText, kAny, doc);
  option.choices = std::move(choices);
  option.get = [field, name](const PlannerOptions& o) { return OptionValue(name(o.*field)); };
  option.set = [field, parse](PlannerOptions& o, const OptionValue& value) {
    o.*field = parse(std::get<std::string>(value.value()));
  };
  return option;
}

OptionDescriptor WithAliases(OptionDescriptor option, std::vector<std::string> aliases) {
  option.aliases = std::move(aliases);
  return option;
}

// An option of the caller's machine or run, not of the task; `flag`
// replaces the default flag where a command's own flag has that name.
OptionDescriptor PerRun(OptionDescriptor option, const char* flag = nullptr) {
  option.per_task = false;
  if (flag != nullptr) option.flag = flag;
  return option;
}

std::vector<OptionDescriptor> MakeTable() {
  using O = PlannerOptions;
  using K = OptionKind;
  std::vector<OptionDescriptor> table = {
      Choice("mode", &O::mode, &ParsePlanMode, &PlanModeName, {"warm", "replan"},
             "warm: the plan and its cache persist between steps; replan: from noise every step"),
      Field("horizon", &O::horizon, AtLeast(1), "H: plan tokens"),
      WithAliases(Field("levels", &O::levels, AtLeast(1), "K: sampling levels"), {"num_levels"}),
      Field("uncertainty", &O::uncertainty, AtLeast(0),
            "the pyramid's u, levels added per plan token; 0: K / H (the whole plan denoises)"),
      WithAliases(Field("calls_per_step", &O::calls_per_step, AtLeast(1),
                        "r: model calls per warm step (re-noise by r - 1 levels, then r calls)"),
                  {"calls"}),
      WithAliases(Field("renoise_levels", &O::renoise_levels, AtLeast(0),
                        "extra levels a warm step re-noises the shifted plan by, so that its "
                        "front reacts to the real observations"),
                  {"renoise"}),
      Field("front_tokens", &O::front_tokens, AtLeast(0),
            "block cache: plan tokens a warm step runs, the rest wait for a refresh; 0: all "
            "(exact)"),
      Field("refresh_every", &O::refresh_every, AtLeast(1),
            "block cache: control steps between runs of the whole plan"),
      Field("candidates", &O::candidates, AtLeast(1), "N: plans sampled as one batch"),
      Choice("selection", &O::selection, &ParseSelection, &SelectionName, {"best", "mppi"},
             "best: the cheapest candidate's action; mppi: the candidates' cost-weighted mean"),
      Field("temperature", &O::temperature, Above(0),
            "MPPI temperature, in units of the summed cost"),
      WithAliases(Field("guidance_scale", &O::guidance_scale, AtLeast(0),
                        "cost guidance: the cost gradient's weight in each denoising step; 0: off"),
                  {"guidance"}),
      Field("outcome_guidance", &O::outcome_guidance, AtLeast(0),
            "classifier-free guidance toward target_outcome (a model trained with the outcome "
            "condition); 0: off, 1: conditioned alone, else two model calls per window (one "
            "for a CFG-aware student, up to its maximum)"),
      Field("target_outcome", &O::target_outcome, Closed(0, 1),
            "the outcome guided toward: a quantile of the training windows' mean reward"),
      Field("eta", &O::eta, AtLeast(0), "DDIM stochasticity; > 0 keeps warm candidates diverse"),
      Field("noise_scale", &O::noise_scale, Above(0),
            "the std of the noise plans are drawn from; < 1 samples nearer the model's most "
            "likely plans (low-temperature sampling); 1: the model's distribution"),
      Field("noise_scale_share", &O::noise_scale_share, Closed(0, 1),
            "the share of the candidates drawn at noise_scale, the rest at 1; 1: all"),
      Field("action_window", &O::action_window, AtLeast(1),
            "the executed action is the mean of the plan's first W actions (<= H); 1: the first "
            "alone"),
      Field("action_gain", &O::action_gain, Above(0),
            "the executed action is G times the window's mean, clamped to [-1, 1]; 1: the mean"),
      Field("action_gain_knee", &O::action_gain_knee, HalfOpen(0, 1),
            "the gain multiplies only the part of each action's magnitude above the knee; 0: "
            "the whole action"),
      // A file of the caller's: a task file names no paths of its run.
      PerRun(Field("value_model", &O::value_model, kAny,
                   "a critic from `dfmpc train-value` whose value joins each plan's cost; empty: "
                   "none")),
      Field("value_weight", &O::value_weight, Above(0),
            "the value's weight, in discounted steps of reward missed after the valued step"),
      Field("value_step", &O::value_step, AtLeast(0),
            "the plan step whose observation the critic values (<= H; in warm mode, a token the "
            "warm step estimates: H - 1 at the default u); 0: H / 2"),
      PerRun(Field("rollout_model", &O::rollout_model, kAny,
                   "an ensemble from `dfmpc train-mlp --ensemble` that scores each candidate by a "
                   "rollout of its actions instead of its sampled observations; empty: none")),
      Field("rollout_disagreement", &O::rollout_disagreement, AtLeast(0),
            "with a rollout_model, the weight of its members' disagreement along each "
            "candidate's rollout, added to the cost; 0: none"),
      WithAliases(Field("context_length", &O::context_length, AtLeast(0),
                        "real tokens the plan attends to; 0: the model's window - H"),
                  {"context"}),
      WithAliases(Field("sinks", &O::sinks, AtLeast(0),
                        "pinned first tokens of the context (the rest is a sliding window)"),
                  {"num_sinks"}),
      PerRun(Field("threads", &O::threads, AtLeast(0),
                   "LibTorch intra-op threads during the planner's calls; 0: the caller's"),
             "planner-threads"),
      PerRun(Field("device", &O::device, kAny,
                   "cpu, cuda or cuda:N: where the model loads; empty: the CPU")),
      PerRun(Field("cuda_graphs", &O::cuda_graphs, kAny,
                   "on a GPU, replay the step's model calls as CUDA graphs")),
      PerRun(Field("cpu_bf16", &O::cpu_bf16, kAny,
                   "on the CPU, multiply linear layers in bfloat16 in calls of > 64 tokens "
                   "(approximate)")),
  };
  // The seed is unsigned 64-bit; options take it as a non-negative integer.
  OptionDescriptor seed = Describe("seed", K::kInteger, AtLeast(0), "the planner's noise seed");
  seed = PerRun(std::move(seed), "planner-seed");
  seed.get = [](const O& o) { return OptionValue(static_cast<std::int64_t>(o.seed)); };
  seed.set = [](O& o, const OptionValue& value) {
    o.seed = static_cast<std::uint64_t>(std::get<std::int64_t>(value.value()));
  };
  table.insert(table.end() - 4, std::move(seed));
  return table;
}

std::string FormatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.10g", value);
  return text;
}

const char* KindName(OptionKind kind) {
  switch (kind) {
    case OptionKind::kFlag:
      return "true or false";
    case OptionKind::kInteger:
      return "an integer";
    case OptionKind::kNumber:
      return "a number";
    case OptionKind::kText:
      return "text";
  }
  return "";
}

// Levenshtein distance, for "did you mean".
std::size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

bool InRange(const OptionDescriptor& option, double x) {
  const bool above = option.min_open ? x > option.min : x >= option.min;
  const bool below = option.max_open ? x < option.max : x <= option.max;
  return std::isfinite(x) && above && below;
}

}  // namespace

std::string OptionValue::ToString() const {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>) return v ? "true" : "false";
        if constexpr (std::is_same_v<V, std::int64_t>) return std::to_string(v);
        if constexpr (std::is_same_v<V, double>) return FormatNumber(v);
        if constexpr (std::is_same_v<V, std::string>) return '"' + v + '"';
      },
      value_);
}

std::string OptionDescriptor::RangeText() const {
  if (!choices.empty()) {
    std::string text;
    for (std::size_t i = 0; i < choices.size(); ++i) {
      text += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    }
    return text;
  }
  if (kind == OptionKind::kFlag) return "true or false";
  if (kind == OptionKind::kText) return "any";
  const std::string low = FormatNumber(min), high = FormatNumber(max);
  if (std::isinf(max) || max == kIntMax) return (min_open ? "> " : ">= ") + low;
  return (min_open ? "(" : "[") + low + ", " + high + (max_open ? ")" : "]");
}

std::string OptionDescriptor::DefaultText() const { return get(PlannerOptions()).ToString(); }

const std::vector<OptionDescriptor>& PlannerOptionTable() {
  static const std::vector<OptionDescriptor> table = MakeTable();
  return table;
}

const OptionDescriptor& FindPlannerOption(const std::string& key) {
  const std::vector<OptionDescriptor>& table = PlannerOptionTable();
  for (const OptionDescriptor& option : table) {
    if (key == option.key) return option;
    for (const std::string& alias : option.aliases) {
      if (key == alias) return option;
    }
  }
  const auto closest = std::min_element(
      table.begin(), table.end(), [&](const OptionDescriptor& a, const OptionDescriptor& b) {
        return EditDistance(key, a.key) < EditDistance(key, b.key);
      });
  std::string message = "unknown planner option '" + key + "'";
  if (EditDistance(key, closest->key) <= std::max<std::size_t>(2, key.size() / 3)) {
    message += " (did you mean '" + std::string(closest->key) + "'?)";
  }
  throw std::invalid_argument(message);
}

OptionValue ConvertOptionValue(const OptionDescriptor& option, const OptionValue& value) {
  const std::string name = "planner option '" + std::string(option.key) + "'";
  const OptionValue::Variant& v = value.value();
  const auto wrong_kind = [&] {
    return std::invalid_argument(name + " must be " + KindName(option.kind) + ", got " +
                                 value.ToString());
  };
  switch (option.kind) {
    case OptionKind::kFlag:
      if (!std::holds_alternative<bool>(v)) throw wrong_kind();
      return value;
    case OptionKind::kText: {
      if (!std::holds_alternative<std::string>(v)) throw wrong_kind();
      const std::string& text = std::get<std::string>(v);
      if (!option.choices.empty() &&
          std::find(option.choices.begin(), option.choices.end(), text) == option.choices.end()) {
        throw std::invalid_argument(name + " must be " + option.RangeText() + ", got '" + text +
                                    "'");
      }
      return value;
    }
    case OptionKind::kInteger: {
      if (!std::holds_alternative<std::int64_t>(v)) throw wrong_kind();
      const std::int64_t x = std::get<std::int64_t>(v);
      if (!InRange(option, static_cast<double>(x))) {
        throw std::invalid_argument(name + " must be " + option.RangeText() + ", got " +
                                    std::to_string(x));
      }
      return value;
    }
    case OptionKind::kNumber: {
      double x = 0.0;
      if (std::holds_alternative<double>(v)) {
        x = std::get<double>(v);
      } else if (std::holds_alternative<std::int64_t>(v)) {
        x = static_cast<double>(std::get<std::int64_t>(v));
      } else {
        throw wrong_kind();
      }
      if (!InRange(option, x)) {
        throw std::invalid_argument(name + " must be finite and " + option.RangeText() + ", got " +
                                    FormatNumber(x));
      }
      return OptionValue(x);
    }
  }
  throw wrong_kind();
}

OptionValue ParseOptionValue(const OptionDescriptor& option, const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument("planner option '" + std::string(option.key) + "' must be " +
                                 KindName(option.kind) + ", got '" + text + "'");
  };
  switch (option.kind) {
    case OptionKind::kFlag:
      if (text == "true" || text == "1") return ConvertOptionValue(option, true);
      if (text == "false" || text == "0") return ConvertOptionValue(option, false);
      throw bad();
    case OptionKind::kText:
      return ConvertOptionValue(option, text);
    case OptionKind::kInteger: {
      std::istringstream in(text);
      std::int64_t x = 0;
      char extra = 0;
      if (!(in >> x) || in >> extra) throw bad();
      return ConvertOptionValue(option, x);
    }
    case OptionKind::kNumber: {
      std::istringstream in(text);
      double x = 0.0;
      char extra = 0;
      if (!(in >> x) || in >> extra) throw bad();
      return ConvertOptionValue(option, x);
    }
  }
  throw bad();
}

PlannerOverrides::PlannerOverrides(
    std::initializer_list<std::pair<std::string, OptionValue>> values) {
  for (const auto& [key, value] : values) Set(key, value);
}

PlannerOverrides& PlannerOverrides::Set(const std::string& key, const OptionValue& value) {
  const OptionDescriptor& option = FindPlannerOption(key);
  OptionValue converted = ConvertOptionValue(option, value);
  for (auto& [known, held] : values_) {
    if (known == option.key) {
      held = std::move(converted);
      return *this;
    }
  }
  values_.emplace_back(option.key, std::move(converted));
  return *this;
}

bool PlannerOverrides::Has(const std::string& key) const {
  const std::string canonical = FindPlannerOption(key).key;
  return std::any_of(values_.begin(), values_.end(),
                     [&](const auto& entry) { return entry.first == canonical; });
}

void PlannerOverrides::ApplyTo(PlannerOptions& options) const {
  for (const auto& [key, value] : values_) FindPlannerOption(key).set(options, value);
}

PlannerOverrides TaskFileOverrides(const task::TaskSpec& task) {
  PlannerOverrides overrides;
  if (!task.root.Has("planner")) return overrides;
  const task::TaskTable table = task.root.Table("planner");
  for (const std::string& key : table.Keys()) {
    const OptionDescriptor* option = nullptr;
    try {
      option = &FindPlannerOption(key);
      if (key != option->key) {
        throw std::invalid_argument("unknown planner option '" + key + "' (did you mean '" +
                                    option->key + "'?)");
      }
    } catch (const std::invalid_argument& error) {
      table.Fail(key, error.what());
    }
    if (!option->per_task) {
      table.Fail(key, "'" + key + "' belongs to the caller's run, not to the task file");
    }
    // The table's readers name the file and key of a value of the wrong type.
    const OptionValue value =
        option->kind == OptionKind::kFlag      ? OptionValue(table.Boolean(key, false))
        : option->kind == OptionKind::kInteger ? OptionValue(table.Integer(key))
        : option->kind == OptionKind::kNumber  ? OptionValue(table.Number(key))
                                               : OptionValue(table.Text(key));
    try {
      overrides.Set(key, value);
    } catch (const std::invalid_argument& error) {
      table.Fail(key, error.what());
    }
  }
  table.RejectUnread();
  return overrides;
}

}  // namespace dfmpc::planner
