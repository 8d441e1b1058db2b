// Names shared by the dataset writer and reader (see envs/DATASET.md).
#ifndef DFMPC_ENVS_SRC_DATASET_FORMAT_H_
#define DFMPC_ENVS_SRC_DATASET_FORMAT_H_

#include <string>

#include "dfmpc/envs/perturbation.h"

namespace dfmpc::envs::dataset_format {

inline constexpr char kFormatName[] = "dfmpc-dataset";

inline constexpr char kObservations[] = "observations";
inline constexpr char kNextObservations[] = "next_observations";
inline constexpr char kActions[] = "actions";
inline constexpr char kRewards[] = "rewards";
inline constexpr char kTerminals[] = "terminals";
inline constexpr char kTimeouts[] = "timeouts";
inline constexpr char kFrames[] = "frames";
inline constexpr char kEpisodeStarts[] = "episode_starts";
inline constexpr char kEpisodeLengths[] = "episode_lengths";
inline constexpr char kEpisodeReturns[] = "episode_returns";
inline constexpr char kEpisodeSuccess[] = "episode_success";
inline constexpr char kEpisodePerturbations[] = "episode_perturbations";  // version 3
// Attribute of kEpisodePerturbations: its column names, ColumnNames().
inline constexpr char kNames[] = "names";
inline std::string ColumnNames() {
  std::string joined;
  for (const std::string& name : PerturbationNames()) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}
// Root attribute: the spec the episodes' perturbations came from (version 3).
inline constexpr char kPerturbation[] = "perturbation";

}  // namespace dfmpc::envs::dataset_format

#endif  // DFMPC_ENVS_SRC_DATASET_FORMAT_H_
