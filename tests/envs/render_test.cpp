#include <gtest/gtest.h>

#include <iostream>
#include <stdexcept>
#include <string>

#include "dfmpc/envs/env.h"

namespace dfmpc::envs {
namespace {

// Renders once to find out whether this machine has any EGL device. Any
// other failure is a rendering bug, and fails the test.
bool CanRender(Env& env, std::string* why) {
  try {
    env.Render(8, 8);
    return true;
  } catch (const NoRenderDevice& e) {
    *why = e.what();
    return false;
  }
}

class RenderTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    env_ = MakeEnv(GetParam());
    std::string why;
    if (!CanRender(*env_, &why)) {
      std::cerr << "no EGL rendering here: " << why << "\n";
      GTEST_SKIP() << "no EGL display can be created: " << why;
    }
  }
  std::unique_ptr<Env> env_;
};

TEST_P(RenderTest, SameStateSameImageOtherStateOtherImage) {
  env_->Reset(1);
  const std::vector<std::uint8_t> first = env_->Render(64, 48);
  ASSERT_EQ(first.size(), 64u * 48u * 3u);
  EXPECT_EQ(env_->Render(64, 48), first);
  const Eigen::VectorXd state = env_->state();

  env_->Reset(2);
  for (int i = 0; i < 10; ++i) env_->Step(Eigen::VectorXd::Ones(env_->action_spec().size()));
  EXPECT_NE(env_->Render(64, 48), first);
  env_->set_state(state);
  EXPECT_EQ(env_->Render(64, 48), first);
}

TEST_P(RenderTest, RenderingDoesNotDisturbTheSimulation) {
  auto quiet = env_->Clone();
  env_->Reset(3);
  quiet->Reset(3);
  const Eigen::VectorXd action = Eigen::VectorXd::Constant(env_->action_spec().size(), 0.7);
  for (int i = 0; i < 20; ++i) {
    env_->Render(16, 16);
    EXPECT_EQ(env_->Step(action).observation, quiet->Step(action).observation);
  }
}

TEST_P(RenderTest, RejectsBadSizes) {
  EXPECT_THROW(env_->Render(0, 10), std::invalid_argument);
  EXPECT_THROW(env_->Render(10, 5000), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Tasks, RenderTest, testing::ValuesIn(TaskNames()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace dfmpc::envs
