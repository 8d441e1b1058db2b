#include "dfmpc/worldmodel/between_blocks.h"

namespace dfmpc::worldmodel {
namespace {

thread_local const std::function<void()>* installed_check = nullptr;

}  // namespace

BetweenBlocks::BetweenBlocks(const std::function<void()>* check) : previous_(installed_check) {
  installed_check = check;
}

BetweenBlocks::~BetweenBlocks() { installed_check = previous_; }

void BetweenBlocks::Check() {
  if (installed_check != nullptr && *installed_check) (*installed_check)();
}

}  // namespace dfmpc::worldmodel
