#include "dfmpc/worldmodel/device.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <stdexcept>

namespace dfmpc::worldmodel {
namespace {

TEST(DeviceTest, ParsesCpuAndRejectsUnknownNames) {
  EXPECT_TRUE(ParseDevice("cpu").is_cpu());
  EXPECT_THROW(ParseDevice("gpu"), std::invalid_argument);
  EXPECT_THROW(ParseDevice("cuda:x"), std::invalid_argument);
}

TEST(DeviceTest, CudaIsRefusedClearlyWhereAbsent) {
  if (torch::cuda::is_available()) {
    EXPECT_TRUE(ParseDevice("cuda").is_cuda());
    EXPECT_THROW(ParseDevice("cuda:999"), std::invalid_argument);
  } else {
    EXPECT_THROW(ParseDevice("cuda"), std::invalid_argument);
  }
}

}  // namespace
}  // namespace dfmpc::worldmodel
