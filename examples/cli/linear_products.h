// The time a world model's linear layers take as bare matrix products, for
// bench mpc: how much of a control step is arithmetic the layers cannot
// avoid, against the step's own latency.
#ifndef DFMPC_EXAMPLES_CLI_LINEAR_PRODUCTS_H_
#define DFMPC_EXAMPLES_CLI_LINEAR_PRODUCTS_H_

#include <cstdint>

#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::cli {

// Median milliseconds of one model call's linear products on the CPU: the
// token embedding, each block's attention input and output and MLP layers,
// and the output layer, each on `rows` rows of random values (the layers a
// call runs, without attention, norms or activations). Float products are
// `at::linear`; with `bf16_blocks` the blocks' layers are the model's
// bfloat16 products alone (bfloat16 rows by a bfloat16 weight; the
// conversions around them and the bias are not timed), the embedding and
// output layers staying float.
// Throws std::invalid_argument when rows < 1.
double LinearProductsMs(const worldmodel::TransformerConfig& config, int64_t rows,
                        bool bf16_blocks);

// Multiply-adds of those products per row, counted twice (flops).
double LinearFlopsPerRow(const worldmodel::TransformerConfig& config);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_LINEAR_PRODUCTS_H_
