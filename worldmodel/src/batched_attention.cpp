#include "dfmpc/worldmodel/batched_attention.h"

namespace dfmpc::worldmodel {
namespace {

thread_local bool batched_attention = false;

}  // namespace

BatchedAttention::BatchedAttention(bool on) : previous_(batched_attention) {
  batched_attention = on;
}

BatchedAttention::~BatchedAttention() { batched_attention = previous_; }

bool BatchedAttention::on() { return batched_attention; }

}  // namespace dfmpc::worldmodel
