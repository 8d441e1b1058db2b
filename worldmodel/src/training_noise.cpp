#include "training_noise.h"

#include <ATen/ATen.h>

namespace dfmpc::worldmodel {

at::Tensor IndependentTimesteps(int64_t count, int64_t window, int64_t num_timesteps,
                                double clean_prob, double power, at::Generator& gen) {
  // Power 1 keeps the integer draw, so earlier seeds give the same models.
  const at::Tensor noisy =
      power == 1.0 ? at::randint(num_timesteps, {count, window}, gen, at::kLong)
                   : (at::rand({count, window}, gen).pow(power) * num_timesteps)
                         .floor()
                         .to(at::kLong)
                         .clamp_max(num_timesteps - 1);
  const at::Tensor clean = at::rand({count, window}, gen) < clean_prob;
  return at::where(clean, at::full_like(noisy, -1), noisy);
}

at::Tensor PyramidTimesteps(int64_t count, int64_t window, int64_t num_timesteps,
                            at::Generator& gen) {
  const at::Tensor prefix = at::randint(window, {count, 1}, gen, at::kLong);
  const at::Tensor start = at::randint(num_timesteps, {count, 1}, gen, at::kLong);
  const at::Tensor slope = at::randint(num_timesteps / 4 + 1, {count, 1}, gen, at::kLong);
  const at::Tensor offset = at::arange(window, at::kLong).unsqueeze(0) - prefix;
  const at::Tensor rising = (start + offset * slope).clamp_max(num_timesteps - 1);
  return at::where(offset < 0, at::full_like(rising, -1), rising);
}

}  // namespace dfmpc::worldmodel
