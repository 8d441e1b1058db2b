#include "step_transaction.h"

#include <ATen/core/Generator.h>

namespace dfmpc::planner {

StepTransaction::StepTransaction(worldmodel::KvCache& cache, at::Generator& generator,
                                 int tokens, bool clears, worldmodel::KvCacheMark& mark)
    : cache_(cache),
      mark_(mark),
      generator_(at::check_generator<at::CPUGeneratorImpl>(generator)),
      engine_(generator_->engine()),
      next_float_(generator_->next_float_normal_sample()),
      next_double_(generator_->next_double_normal_sample()) {
  if (clears) {
    mark_ = cache.Snapshot();
  } else {
    cache.Mark(tokens, mark_);
  }
}

StepTransaction::~StepTransaction() {
  if (committed_) return;
  generator_->set_engine(engine_);
  generator_->set_next_float_normal_sample(next_float_);
  generator_->set_next_double_normal_sample(next_double_);
  try {
    cache_.Restore(mark_);
  } catch (...) {  // copying back into preallocated storage failed: drop the history
    cache_.Clear();
  }
}

}  // namespace dfmpc::planner
