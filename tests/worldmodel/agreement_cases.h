// The case grid shared by the cached-vs-uncached agreement tests.
#ifndef DFMPC_TESTS_WORLDMODEL_AGREEMENT_CASES_H_
#define DFMPC_TESTS_WORLDMODEL_AGREEMENT_CASES_H_

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "dfmpc/worldmodel/scheduling_matrix.h"

namespace dfmpc::worldmodel::testing {

// Schedule kind, context S, levels K, horizon H, batch B.
using AgreementCase = std::tuple<ScheduleKind, int, int, int, int>;

inline const auto kAllScheduleKinds =
    ::testing::Values(ScheduleKind::kPyramid, ScheduleKind::kFullSequence,
                      ScheduleKind::kAutoregressive, ScheduleKind::kTrapezoid);

// "pyramid_S17_K4_H8_B3": readable test names.
inline std::string AgreementCaseName(const ::testing::TestParamInfo<AgreementCase>& info) {
  const auto& [kind, s, k, h, b] = info.param;
  return ScheduleKindName(kind) + "_S" + std::to_string(s) + "_K" + std::to_string(k) + "_H" +
         std::to_string(h) + "_B" + std::to_string(b);
}

}  // namespace dfmpc::worldmodel::testing

#endif  // DFMPC_TESTS_WORLDMODEL_AGREEMENT_CASES_H_
