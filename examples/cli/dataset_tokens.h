// Bridges envs datasets and world-model tokens.
#ifndef DFMPC_EXAMPLES_CLI_DATASET_TOKENS_H_
#define DFMPC_EXAMPLES_CLI_DATASET_TOKENS_H_

#include <ATen/core/Tensor.h>

#include <vector>

#include "dfmpc/envs/dataset.h"
#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::cli {

// The token layout of a dataset's task: [a_{t-1}, o_t].
worldmodel::TokenLayout DatasetLayout(const envs::Dataset& dataset);

// One [L + 1, d] token sequence per episode of `dataset` (o_0 .. o_L, the
// last one from next_observations), unnormalized.
std::vector<at::Tensor> EpisodeTokenSequences(const envs::Dataset& dataset);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_DATASET_TOKENS_H_
