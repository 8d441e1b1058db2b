// The planner's option table: every option reachable under one name from a
// task file and from overrides, checked by Validate, and a caller's
// overrides changing only what they name.
#include "dfmpc/planner/option_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>

#include "dfmpc/planner/planner.h"
#include "dfmpc/task/task_spec.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

std::string ErrorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

// A value of `option` other than its default, within its range.
OptionValue OtherValue(const OptionDescriptor& option) {
  const OptionValue::Variant initial = option.get(PlannerOptions()).value();
  switch (option.kind) {
    case OptionKind::kFlag:
      return !std::get<bool>(initial);
    case OptionKind::kInteger:
      return std::get<std::int64_t>(initial) + 1;
    case OptionKind::kNumber: {
      // Bounded ranges take a point strictly inside (the default may sit on
      // a bound); unbounded ones a step above the default.
      if (std::isinf(option.max)) return std::get<double>(initial) + 0.25;
      const double inside = option.min + (option.max - option.min) / 3.0;
      return inside == std::get<double>(initial) ? option.min + (option.max - option.min) / 2.0
                                                 : inside;
    }
    case OptionKind::kText:
      if (!option.choices.empty()) {
        return option.choices[0] == std::get<std::string>(initial) ? option.choices[1]
                                                                   : option.choices[0];
      }
      return std::string(option.key) == "device" ? std::string("cpu") : std::string("other");
  }
  return false;
}

TEST(OptionTableTest, KeysAreUniqueAndEachHasADocARangeAndADefaultInRange) {
  std::set<std::string> names, flags;
  for (const OptionDescriptor& option : PlannerOptionTable()) {
    EXPECT_TRUE(names.insert(option.key).second) << option.key;
    for (const std::string& alias : option.aliases) {
      EXPECT_TRUE(names.insert(alias).second) << alias;
    }
    EXPECT_TRUE(flags.insert(option.flag).second) << option.flag;
    EXPECT_FALSE(std::string(option.doc).empty()) << option.key;
    EXPECT_FALSE(option.RangeText().empty()) << option.key;
    EXPECT_NO_THROW(ConvertOptionValue(option, option.get(PlannerOptions()))) << option.key;
  }
  EXPECT_NO_THROW(PlannerOptions().Validate());
}

// Each option set through overrides (and so through the CLI and Python,
// which build overrides) lands in its field, and back out under its key.
TEST(OptionTableTest, EveryOptionRoundTripsThroughOverrides) {
  for (const OptionDescriptor& option : PlannerOptionTable()) {
    const OptionValue other = OtherValue(option);
    PlannerOptions options;
    PlannerOverrides({{option.key, other}}).ApplyTo(options);
    EXPECT_EQ(option.get(options).ToString(), ConvertOptionValue(option, other).ToString())
        << option.key;
    EXPECT_NE(option.get(options).ToString(), option.DefaultText()) << option.key;
  }
}

// Each option a task file may set is read from its [planner] table under the
// same key; the others are refused there.
TEST(OptionTableTest, EveryPerTaskOptionIsATaskFileKey) {
  const task::TaskSpec pendulum = task::LoadTaskSpec(kPendulum);
  for (const OptionDescriptor& option : PlannerOptionTable()) {
    const std::string line = std::string(option.key) + " = " + OtherValue(option).ToString();
    // The pendulum's file with its [planner] table replaced by this one line.
    std::string text = pendulum.toml_text;
    const std::size_t table = text.find("[planner]");
    ASSERT_NE(table, std::string::npos);
    const std::size_t next = text.find("\n[", table);
    text.replace(table, next == std::string::npos ? std::string::npos : next + 1 - table,
                 "[planner]\n" + line + "\n");
    const task::TaskSpec spec = task::ParseTaskSpec(text, pendulum.mjcf_text, "t/task.toml");
    if (!option.per_task) {
      EXPECT_NE(ErrorOf([&] { TunedPlannerOptions(spec); }).find("belongs to the caller's run"),
                std::string::npos)
          << option.key;
      continue;
    }
    if (std::string(option.key) == "value_model") continue;  // names a file: FromFile loads it
    const ResolvedPlannerOptions resolved = ResolvePlannerOptions(spec);
    EXPECT_EQ(option.get(resolved.options).ToString(),
              ConvertOptionValue(option, OtherValue(option)).ToString())
        << line;
    EXPECT_EQ(resolved.sources.at(option.key), OptionSource::kTaskFile) << line;
  }
}

TEST(OptionTableTest, ValidateChecksEveryRangeOfTheTable) {
  PlannerOptions options;
  options.levels = 0;
  EXPECT_NE(ErrorOf([&] { options.Validate(); }).find("planner option 'levels' must be >= 1"),
            std::string::npos);
  options = PlannerOptions();
  options.action_gain_knee = 1.0;
  EXPECT_NE(ErrorOf([&] {
              options.Validate();
            }).find("planner option 'action_gain_knee' must be finite and [0, 1)"),
            std::string::npos);
  options = PlannerOptions();
  options.temperature = std::nan("");
  EXPECT_NE(ErrorOf([&] { options.Validate(); }).find("'temperature'"), std::string::npos);
  options = PlannerOptions();
  options.action_window = options.horizon + 1;  // a bound from another option
  EXPECT_NE(ErrorOf([&] { options.Validate(); }).find("action window must be in 1..H"),
            std::string::npos);
}

TEST(OptionTableTest, BadOverridesAreRefusedWhereTheyAreWritten) {
  EXPECT_NE(ErrorOf([] {
              PlannerOverrides{{"levles", 4}};
            }).find("unknown planner option 'levles' (did you mean 'levels'?)"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              PlannerOverrides{{"levels", 2.5}};
            }).find("planner option 'levels' must be an integer, got 2.5"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              PlannerOverrides{{"candidates", 0}};
            }).find("must be >= 1, got 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              PlannerOverrides{{"selection", "softmax"}};
            }).find("must be best or mppi, got 'softmax'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              PlannerOverrides{{"cpu_bf16", 1}};
            }).find("must be true or false"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              PlannerOverrides{{"horizon", 1LL << 40}};
            }).find("'horizon'"),
            std::string::npos);
  // Older spellings name the same option, and a number takes an integer.
  const PlannerOverrides old{{"num_levels", 4}, {"calls", 2}, {"temperature", 1}};
  EXPECT_TRUE(old.Has("levels"));
  EXPECT_TRUE(old.Has("calls_per_step"));
  PlannerOptions options;
  old.ApplyTo(options);
  EXPECT_EQ(options.levels, 4);
  EXPECT_EQ(options.calls_per_step, 2);
  EXPECT_EQ(options.temperature, 1.0);
}

// The trap a C++ caller fell into: naming a seed must not drop the task's
// tuned planner.
TEST(OptionTableTest, AnOverrideOfOneOptionKeepsEveryTunedOne) {
  const task::TaskSpec spec = task::LoadTaskSpec(kPendulum);
  const ResolvedPlannerOptions tuned = ResolvePlannerOptions(spec);
  const ResolvedPlannerOptions seeded = ResolvePlannerOptions(spec, 0, {{"seed", 3}});
  ASSERT_NE(tuned.sources.at("action_gain"), OptionSource::kDefault)
      << "the pendulum's task file no longer tunes its action gain: pick another option";
  for (const OptionDescriptor& option : PlannerOptionTable()) {
    if (std::string(option.key) == "seed") continue;
    EXPECT_EQ(option.get(seeded.options).ToString(), option.get(tuned.options).ToString())
        << option.key;
    EXPECT_EQ(seeded.sources.at(option.key), tuned.sources.at(option.key)) << option.key;
  }
  EXPECT_EQ(seeded.options.seed, 3u);
  EXPECT_EQ(seeded.sources.at("seed"), OptionSource::kCaller);
  EXPECT_EQ(seeded.sources.at("eta"), OptionSource::kDefault);

  // The same through the file API the trap was in.
  const auto planner = Planner::FromFile(ModelPath(kPendulum), {{"seed", 3}});
  for (const OptionDescriptor& option : PlannerOptionTable()) {
    const std::string key = option.key;
    // Resolved against the model by the planner: u and the context filled in.
    if (key == "uncertainty" || key == "context_length") continue;
    EXPECT_EQ(option.get(planner->options()).ToString(), option.get(seeded.options).ToString())
        << key;
  }
}

TEST(OptionTableTest, ADistilledModelsLevelsComeFromTheModelUnlessTheCallerNamesThem) {
  const task::TaskSpec spec = task::LoadTaskSpec(kPendulum);
  const ResolvedPlannerOptions moved = ResolvePlannerOptions(spec, 2);
  EXPECT_EQ(moved.options.levels, 2);
  EXPECT_EQ(moved.sources.at("levels"), OptionSource::kModel);
  EXPECT_EQ(moved.sources.at("horizon"), OptionSource::kDefault);
  const ResolvedPlannerOptions named = ResolvePlannerOptions(spec, 2, {{"levels", 5}});
  EXPECT_EQ(named.options.levels, 5);
  EXPECT_EQ(named.sources.at("levels"), OptionSource::kCaller);
  const std::string table = FormatResolvedOptions(named);
  EXPECT_NE(table.find("levels"), std::string::npos);
  EXPECT_NE(table.find("(caller)"), std::string::npos);
  EXPECT_NE(table.find("(task file)"), std::string::npos);
  EXPECT_NE(table.find("(library default)"), std::string::npos);
}

}  // namespace
}  // namespace dfmpc::planner
