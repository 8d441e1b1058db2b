// Cost terms written as formulas (`term = "expression"`): the built-in
// tasks' formulas equal the C++ terms they replaced (pendulum_energy,
// u_maze_path), in value and in gradient; `dt`, `step` and `previous.*`
// read what they say; bad formulas are refused with the file and key.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::planner {
namespace {

// The C++ terms the formulas replaced, in double-precision tensors.
at::Tensor UnitCosine(const at::Tensor& cosine, const at::Tensor& sine) {
  return cosine / at::sqrt(cosine.square() + sine.square() + 1e-6);
}

at::Tensor EnergyGapCost(const at::Tensor& cosine, const at::Tensor& sine, const at::Tensor& speed,
                         double surplus_rate) {
  const at::Tensor energy = 0.5 * 0.25 * speed.square() + 4.905 * UnitCosine(cosine, sine);
  const at::Tensor gap = (energy - 4.905) / (2.0 * 4.905);
  return at::relu(-gap) + surplus_rate * at::relu(gap);
}

// The sine of the angle step between consecutive (cos, sin) pairs over dt;
// the first step repeats the second's estimate.
at::Tensor FiniteDifferenceVelocity(const at::Tensor& cosine, const at::Tensor& sine, double dt) {
  const int64_t steps = cosine.size(-1);
  const at::Tensor c0 = cosine.narrow(-1, 0, steps - 1), s0 = sine.narrow(-1, 0, steps - 1);
  const at::Tensor c1 = cosine.narrow(-1, 1, steps - 1), s1 = sine.narrow(-1, 1, steps - 1);
  const at::Tensor norms =
      at::sqrt((c0.square() + s0.square()) * (c1.square() + s1.square()) + 1e-6);
  const at::Tensor velocity = (c0 * s1 - s0 * c1) / norms / dt;
  return at::cat({velocity.narrow(-1, 0, 1), velocity}, -1);
}

at::Tensor SmoothDistance(const at::Tensor& dx, const at::Tensor& dy) {
  return at::sqrt(dx.square() + dy.square() + 1e-6);
}

// The shortest way to the goal around the U-maze's wall, over 5 m.
at::Tensor UMazePath(const at::Tensor& o) {
  const double corner = 0.65, gate = 0.5;
  const at::Tensor x = o.select(-1, 0), y = o.select(-1, 1);
  const at::Tensor goal_x = o.select(-1, 4), goal_y = o.select(-1, 5);
  const at::Tensor to_goal = SmoothDistance(goal_x - corner, goal_y - corner);
  const at::Tensor direct = SmoothDistance(goal_x - x, goal_y - y);
  const at::Tensor via_upper = SmoothDistance(x - corner, y - corner) + to_goal;
  const at::Tensor via_both = SmoothDistance(x - corner, y + corner) + 2.0 * corner + to_goal;
  return at::where(y > gate, direct, at::where(x > gate, via_upper, via_both)) / 5.0;
}

// [B, H, D] uniform in [low, high] per feature.
at::Tensor Uniform(int64_t batch, int64_t steps, const std::vector<std::pair<double, double>>& box,
                   uint64_t seed) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> features;
  for (const auto& [low, high] : box) {
    features.push_back(at::rand({batch, steps}, generator, at::kDouble) * (high - low) + low);
  }
  return at::stack(features, -1);
}

// The task's [[cost]] term `index`, weighted, on `o` with zero actions.
at::Tensor Term(const std::string& task, int index, const at::Tensor& o) {
  const task::TaskSpec spec = task::LoadTaskSpec(task);
  const int64_t actions = static_cast<int64_t>(spec.root.Texts("actions").size());
  return MakeTaskCostTerm(spec, index)
      ->StepCosts(o, at::zeros({o.size(0), o.size(1), actions}, at::kDouble));
}

// Both are close to the last digits of double precision: the formulas
// repeat the C++ terms' operations in the same order.
void ExpectClose(const at::Tensor& actual, const at::Tensor& expected, double tolerance) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  const double error = (actual - expected).abs().max().item<double>();
  EXPECT_LE(error, tolerance) << "largest difference " << error;
}

TEST(ExpressionTermTest, ThePendulumsEnergyFormulaIsTheTermItReplaced) {
  const at::Tensor o = Uniform(16, 32, {{-1.2, 1.2}, {-1.2, 1.2}, {-12.0, 12.0}}, 1);
  ExpectClose(Term("pendulum_swingup", 1, o),
              0.5 * EnergyGapCost(o.select(-1, 0), o.select(-1, 1), o.select(-1, 2), 0.5), 1e-9);
}

// The novel pendulum's velocity comes from the step before; as the planner
// scores plans (PlanCosts) the step just taken leads, and every plan step
// equals the finite-difference term. Alone (StepCosts), a sequence's first
// step reads its own values: velocity 0.
TEST(ExpressionTermTest, TheNovelPendulumsFormulaIsTheFiniteDifferenceTerm) {
  const at::Tensor o = Uniform(8, 12, {{-1.2, 1.2}, {-1.2, 1.2}}, 2);
  const at::Tensor expected =
      0.5 * EnergyGapCost(o.select(-1, 0), o.select(-1, 1),
                          FiniteDifferenceVelocity(o.select(-1, 0), o.select(-1, 1), 0.02), 0.25);
  const at::Tensor actual = Term("pendulum_swingup_novel", 1, o);
  ExpectClose(actual.narrow(1, 1, 11), expected.narrow(1, 1, 11), 1e-9);
  ExpectClose(actual.select(1, 0),
              0.5 * EnergyGapCost(o.select(-1, 0).select(1, 0), o.select(-1, 1).select(1, 0),
                                  at::zeros({8}, at::kDouble), 0.25),
              1e-12);
}

TEST(ExpressionTermTest, TheMazesPathFormulaIsTheTermItReplaced) {
  // Positions across all three corridors and the wall, goals about the
  // goal's corner.
  const at::Tensor o =
      Uniform(32, 16, {{-1.5, 1.5}, {-1.5, 1.5}, {-1, 1}, {-1, 1}, {-1.3, -0.7}, {0.7, 1.3}}, 3);
  ExpectClose(Term("pointmass_maze", 0, o), UMazePath(o), 1e-12);
}

// The task's cost with its [[cost]] tables replaced by one formula.
std::unique_ptr<TaskCost> PendulumCostOf(const std::string& formula, int action_repeat = 0) {
  const task::TaskSpec pendulum = task::LoadTaskSpec("pendulum_swingup");
  std::string toml = pendulum.toml_text;
  const size_t begin = toml.find("[[cost]]"), end = toml.find("[planner]");
  toml.replace(begin, end - begin,
               "[[cost]]\nterm = \"expression\"\nexpression = \"" + formula + "\"\nweight = 1\n");
  return MakeTaskCost(task::ParseTaskSpec(toml, pendulum.mjcf_text, "arm/task.toml"),
                      action_repeat);
}

std::vector<double> Values(const at::Tensor& costs) {
  const at::Tensor flat = costs.contiguous().view({-1});
  return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}

TEST(ExpressionTermTest, StepAndDtCountPlanStepsAndSeconds) {
  const at::Tensor o = at::zeros({1, 4, 3}, at::kDouble), a = at::zeros({1, 4, 1}, at::kDouble);
  const at::Tensor now = at::zeros({3}, at::kDouble), applied = at::zeros({1}, at::kDouble);
  // The pendulum's MJCF steps 0.02 s; a model trained at 2 physics steps per
  // control step plans 0.04 s apart.
  const auto cost = PendulumCostOf("10 * step + dt");
  EXPECT_EQ(Values(cost->StepCosts(o, a)), (std::vector<double>{0.02, 10.02, 20.02, 30.02}));
  EXPECT_EQ(Values(cost->PlanCosts(o, a, now, applied)),
            (std::vector<double>{0.02, 10.02, 20.02, 30.02}));
  EXPECT_EQ(Values(PendulumCostOf("dt", 2)->StepCosts(o, a)),
            (std::vector<double>{0.04, 0.04, 0.04, 0.04}));
}

TEST(ExpressionTermTest, PreviousReadsTheStepBefore) {
  const at::Tensor o =
      torch::tensor({0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 4.0}, at::kDouble).view({1, 3, 3});
  const at::Tensor a = torch::tensor({0.5, -0.5, 0.25}, at::kDouble).view({1, 3, 1});
  const auto cost = PendulumCostOf("previous.velocity - velocity + previous.action.torque");
  // The first step reads its own values: 1 - 1 + 0.5.
  EXPECT_EQ(Values(cost->StepCosts(o, a)), (std::vector<double>{0.5, -0.5, -2.5}));
  // In a plan the step just taken (velocity 3, action 1) leads.
  const at::Tensor now = torch::tensor({0.0, 0.0, 3.0}, at::kDouble);
  EXPECT_EQ(Values(cost->PlanCosts(o, a, now, torch::tensor({1.0}, at::kDouble))),
            (std::vector<double>{3.0, -0.5, -2.5}));
}

// Cost guidance takes the gradient: central differences of the formula
// equal autograd of the replaced term, through the lead and the step-before
// shift (error of order 1e-10 at a relative step of 1e-6).
TEST(ExpressionTermTest, GradientsEqualAutogradOfTheReplacedTerms) {
  const task::TaskSpec pendulum = task::LoadTaskSpec("pendulum_swingup");
  const at::Tensor o = Uniform(4, 8, {{-1.2, 1.2}, {-1.2, 1.2}, {-12.0, 12.0}}, 4);
  const at::Tensor actual = o.clone().requires_grad_(), expected = o.clone().requires_grad_();
  MakeTaskCostTerm(pendulum, 1)
      ->StepCosts(actual, at::zeros({4, 8, 1}, at::kDouble))
      .sum()
      .backward();
  (0.5 * EnergyGapCost(expected.select(-1, 0), expected.select(-1, 1), expected.select(-1, 2), 0.5))
      .sum()
      .backward();
  ExpectClose(actual.grad(), expected.grad(), 1e-7);

  const auto novel = MakeTaskCost("pendulum_swingup_novel");
  const at::Tensor plan = Uniform(4, 8, {{-1.2, 1.2}, {-1.2, 1.2}}, 5);
  const at::Tensor now = torch::tensor({-0.3, 0.9}, at::kDouble);
  const at::Tensor applied = torch::zeros({1}, at::kDouble);
  const at::Tensor x = plan.clone().requires_grad_(), y = plan.clone().requires_grad_();
  // Only the energy term: the others are the pendulum's built-in terms.
  const auto energy_only = [](const at::Tensor& costs, const at::Tensor& observations) {
    const at::Tensor c = observations.select(-1, 0), s = observations.select(-1, 1);
    return costs - 0.5 * (1.0 - UnitCosine(c, s)) / 2.0;
  };
  energy_only(novel->PlanCosts(x, at::zeros({4, 8, 1}, at::kDouble), now, applied), x)
      .sum()
      .backward();
  const at::Tensor led = at::cat({now.view({1, 1, 2}).expand({4, 1, 2}), y}, 1);
  (0.5 * EnergyGapCost(led.select(-1, 0), led.select(-1, 1),
                       FiniteDifferenceVelocity(led.select(-1, 0), led.select(-1, 1), 0.02), 0.25))
      .narrow(1, 1, 8)
      .sum()
      .backward();
  ExpectClose(x.grad(), y.grad(), 1e-6);
}

TEST(ExpressionTermTest, OneCostServesThreadsAtOnce) {
  const auto cost = MakeTaskCost("pendulum_swingup");
  const at::Tensor o = Uniform(8, 32, {{-1, 1}, {-1, 1}, {-8, 8}}, 6);
  const at::Tensor a = Uniform(8, 32, {{-1, 1}}, 7);
  const at::Tensor expected = cost->StepCosts(o, a);
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) mismatches[t] += !cost->StepCosts(o, a).equal(expected);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0}));
}

TEST(ExpressionTermTest, BadFormulasAreRefusedWithTheFileAndKey) {
  const std::pair<std::string, std::string> cases[] = {
      {"0.5 * velocty^2",
       "arm/task.toml: cost[0].expression: unknown variable 'velocty' (did you mean 'velocity'?)"},
      {"torque^2", "cost[0].expression: unknown variable 'torque' (did you mean 'action.torque'?)"},
      {"max(cos,", "arm/task.toml: cost[0].expression: Unexpected end of expression"},
      {"tolerance(cos, 0, 1)", "arm/task.toml: cost[0].expression: Too few parameters"},
      {"sqrt(cos - 2)", "arm/task.toml: cost[0].expression: gives nan at cos = "},
      // Probed over the feature's range: the velocity's is +-its scale, 4.
      {"log(velocity)", "arm/task.toml: cost[0].expression: gives nan at velocity = -"},
  };
  for (const auto& [formula, message] : cases) {
    try {
      PendulumCostOf(formula);
      ADD_FAILURE() << "accepted " << formula;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos)
          << formula << "\n  got: " << error.what() << "\n  expected: " << message;
    }
  }
}

}  // namespace
}  // namespace dfmpc::planner
