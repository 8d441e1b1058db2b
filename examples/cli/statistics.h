// Summary statistics for the tool's tables, with one percentile convention
// for every command.
#ifndef DFMPC_EXAMPLES_CLI_STATISTICS_H_
#define DFMPC_EXAMPLES_CLI_STATISTICS_H_

#include <vector>

namespace dfmpc::cli {

// The p-th percentile (p in [0, 100]) by linear interpolation between the
// closest ranks, as numpy's and torch's quantile do by default: the value at
// the fractional index p / 100 * (n - 1) of the sorted values. p = 0 gives
// the minimum, p = 100 the maximum. NaN for no values, and NaN when any value
// is NaN (a diverged run shows in a table instead of being ranked away).
// Throws std::invalid_argument for p outside [0, 100].
double Percentile(std::vector<double> values, double p);

// Percentile 50: the middle value, or the mean of the middle two.
double Median(std::vector<double> values);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_STATISTICS_H_
