#include "model_loader.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace dfmpc::envs {
namespace {

TEST(ModelLoaderTest, LoadsValidXml) {
  const ModelPtr model = LoadModelFromXml(
      "<mujoco><worldbody><body><joint/><geom size='0.1'/></body></worldbody></mujoco>", "tiny");
  EXPECT_EQ(model->nq, 1);
}

TEST(ModelLoaderTest, UnreadableXmlIsAClearError) {
  try {
    LoadModelFromXml("<mujoco><worldbody><body>", "broken");
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos) << e.what();
  }
  EXPECT_THROW(LoadModelFromXml("<mujoco><nonsense/></mujoco>", "unknown_element"),
               std::runtime_error);
}

}  // namespace
}  // namespace dfmpc::envs
