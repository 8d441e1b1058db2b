#include "dfmpc/worldmodel/data_parallel.h"

#include <stdexcept>
#include <string>

namespace dfmpc::worldmodel {

void DataParallelOptions::Validate() const {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("data-parallel options: " + what);
  };
  require(world_size >= 1, "world size must be >= 1, got " + std::to_string(world_size));
  require(rank >= 0 && rank < world_size, "rank " + std::to_string(rank) +
                                              " is not in [0, world size " +
                                              std::to_string(world_size) + ")");
  require(!store_host.empty(), "the store's host is empty");
  require(store_port > 0 && store_port < 65536,
          "store port must be in [1, 65535], got " + std::to_string(store_port));
  require(timeout_seconds >= 1, "timeout must be >= 1 s");
}

}  // namespace dfmpc::worldmodel
