// The generic cost terms a task file can name beyond the built-in tasks':
// `tolerance` equals 1 - the reward's dm_control tolerance (the scalar one of
// task/tolerance.h, tested against dm_control's figures) and
// `terminal_weight` weighs the plan's last step alone.
#include <gtest/gtest.h>
#include <torch/types.h>

#include <string>
#include <vector>

#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "dfmpc/task/tolerance.h"

namespace dfmpc::planner {
namespace {

// The pendulum's task with its [[cost]] tables replaced by `cost_tables`.
task::TaskSpec PendulumWithCost(const std::string& cost_tables) {
  const task::TaskSpec pendulum = task::LoadTaskSpec("pendulum_swingup");
  std::string toml = pendulum.toml_text;
  const size_t begin = toml.find("[[cost]]"), end = toml.find("[planner]");
  toml.replace(begin, end - begin, cost_tables + "\n");
  return task::ParseTaskSpec(toml, pendulum.mjcf_text, "test/task.toml");
}

// A [1, N, 3] plan of the pendulum's (cos, sin, velocity) rows.
at::Tensor Plan(const std::vector<std::vector<double>>& rows) {
  std::vector<double> flat;
  for (const std::vector<double>& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  return torch::tensor(flat, torch::kDouble).view({1, -1, 3});
}

std::vector<double> StepCosts(const task::TaskSpec& spec, const at::Tensor& plan) {
  const at::Tensor actions = torch::zeros({1, plan.size(1), 1}, torch::kDouble);
  const at::Tensor costs = MakeTaskCost(spec)->StepCosts(plan, actions).contiguous();
  return std::vector<double>(costs.data_ptr<double>(), costs.data_ptr<double>() + costs.numel());
}

TEST(CostTermsTest, ToleranceIsOneMinusTheRewardsToleranceForEverySigmoid) {
  std::vector<std::vector<double>> rows;
  for (int i = 0; i <= 220; ++i) rows.push_back({1.0, 0.0, -10.0 + 0.1 * i});
  const at::Tensor plan = Plan(rows);
  for (const std::string sigmoid : {"gaussian", "hyperbolic", "long_tail", "reciprocal", "cosine",
                                    "linear", "quadratic", "tanh_squared"}) {
    const std::vector<double> costs =
        StepCosts(PendulumWithCost("[[cost]]\nterm = \"tolerance\"\nfeature = \"velocity\"\n"
                                   "tolerance = { bounds = [-1, 2], margin = 3, sigmoid = \"" +
                                   sigmoid + "\", value_at_margin = 0.2 }\nweight = 1.5"),
                  plan);
    for (size_t i = 0; i < rows.size(); ++i) {
      const double expected =
          1.5 * (1.0 - task::Tolerance(rows[i][2], -1, 2, 3, task::ParseSigmoid(sigmoid), 0.2));
      EXPECT_NEAR(costs[i], expected, 1e-12) << sigmoid << " at velocity " << rows[i][2];
    }
  }
}

TEST(CostTermsTest, ToleranceOfADistanceAndWithoutAMargin) {
  // (cos, sin) at norms 0.5, 1.0 and 2.0; bounds [0, 1].
  const at::Tensor plan = Plan({{0.3, 0.4, 0}, {0.6, 0.8, 0}, {1.2, 1.6, 0}});
  const std::vector<double> smooth = StepCosts(
      PendulumWithCost("[[cost]]\nterm = \"tolerance\"\nfeatures = [\"cos\", \"sin\"]\n"
                       "tolerance = { bounds = [0, 1], margin = 2, sigmoid = \"linear\" }\n"
                       "weight = 1"),
      plan);
  EXPECT_NEAR(smooth[0], 0.0, 1e-12);
  EXPECT_NEAR(smooth[1], 0.0, 1e-6);  // the smoothed norm is 1 + 5e-7
  EXPECT_NEAR(smooth[2], 1.0 - task::Tolerance(2.0, 0, 1, 2, task::Sigmoid::kLinear), 1e-6);
  const std::vector<double> indicator = StepCosts(
      PendulumWithCost("[[cost]]\nterm = \"tolerance\"\nfeatures = [\"cos\"]\nminus = [\"sin\"]\n"
                       "tolerance = { bounds = [0, 0.25] }\nweight = 1"),
      plan);
  EXPECT_EQ(indicator, (std::vector<double>{0.0, 0.0, 1.0}));  // |cos - sin| 0.1, 0.2, 0.4
}

TEST(CostTermsTest, TerminalWeightWeighsThePlansLastStepAlone) {
  const at::Tensor plan = Plan({{1, 0, 1}, {1, 0, 2}, {1, 0, 3}, {1, 0, 4}});
  const std::string term = "[[cost]]\nterm = \"quadratic\"\nfeature = \"velocity\"\nscale = 1\n";
  EXPECT_EQ(StepCosts(PendulumWithCost(term + "weight = 1\nterminal_weight = 10"), plan),
            (std::vector<double>{1, 4, 9, 160}));
  EXPECT_EQ(StepCosts(PendulumWithCost(term + "weight = 0\nterminal_weight = 2"), plan),
            (std::vector<double>{0, 0, 0, 32}));
  EXPECT_EQ(StepCosts(PendulumWithCost(term + "weight = 2"), plan),
            (std::vector<double>{2, 8, 18, 32}));
}

TEST(CostTermsTest, BadToleranceAndTerminalWeightsAreNamed) {
  const std::string head = "[[cost]]\nterm = \"tolerance\"\nfeature = \"velocity\"\nweight = 1\n";
  const std::pair<std::string, std::string> cases[] = {
      {head, "cost[0].tolerance: missing"},
      {head + "tolerance = { bounds = [1, 0] }", "cost[0].tolerance.bounds: expected [lower"},
      {head + "tolerance = { bounds = [0, 1], margin = -1 }", "tolerance.margin: must be >= 0"},
      {head + "tolerance = { bounds = [0, 1], sigmoid = \"gausian\" }",
       "tolerance.sigmoid: unknown sigmoid 'gausian'"},
      {head + "tolerance = { bounds = [0, 1], value_at_margin = 0 }",
       "tolerance.value_at_margin: must be in (0, 1)"},
      {head + "tolerance = { bounds = [0, 1], margni = 1 }", "tolerance.margni: unknown key"},
      {head + "tolerance = { bounds = [0, 1] }\nterminal_weight = -1",
       "cost[0].terminal_weight: must be >= 0"},
  };
  for (const auto& [tables, message] : cases) {
    try {
      MakeTaskCost(PendulumWithCost(tables));
      ADD_FAILURE() << "accepted:\n" << tables;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos)
          << "got: " << error.what() << "\nexpected it to contain: " << message;
    }
  }
}

}  // namespace
}  // namespace dfmpc::planner
