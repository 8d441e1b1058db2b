// ProcessGroup where the build found no Gloo headers (libgloo-dev): training
// alone works, data-parallel training says what is missing.
#include <stdexcept>

#include "process_group.h"

namespace dfmpc::worldmodel {

struct ProcessGroup::Impl {};

ProcessGroup::ProcessGroup(const DataParallelOptions& options) {
  options.Validate();
  throw std::runtime_error(
      "data-parallel training is not built in: no Gloo headers were found at build time "
      "(Debian: libgloo-dev)");
}

ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::SumAcrossRanks(const std::vector<at::Tensor>&) {}

}  // namespace dfmpc::worldmodel
