#include "attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <map>

#include "dfmpc/worldmodel/device.h"

namespace dfmpc::worldmodel {
namespace {

// q: [B, h, w, hd]; keys: [B or 1, h, n, hd] -> scores [B, h, w, n].
at::Tensor Scores(const at::Tensor& q, const at::Tensor& keys) {
  const int64_t batch = q.size(0);
  if (keys.size(0) == batch) return at::matmul(q, keys.transpose(-2, -1));
  // Shared segment: fold the batch into the query rows instead of expanding
  // (and so copying) the keys per candidate.
  const int64_t heads = q.size(1), window = q.size(2);
  const at::Tensor rows = q.transpose(0, 1).reshape({heads, batch * window, q.size(3)});
  return at::bmm(rows, keys[0].transpose(-2, -1))
      .view({heads, batch, window, keys.size(2)})
      .transpose(0, 1);
}

// probs: [B, h, w, n]; values: [B or 1, h, n, hd] -> [B, h, w, hd].
at::Tensor Mix(const at::Tensor& probs, const at::Tensor& values) {
  const int64_t batch = probs.size(0);
  if (values.size(0) == batch) return at::matmul(probs, values);
  const int64_t heads = probs.size(1), window = probs.size(2);
  const at::Tensor rows = probs.transpose(0, 1).reshape({heads, batch * window, probs.size(3)});
  return at::bmm(rows, values[0]).view({heads, batch, window, values.size(3)}).transpose(0, 1);
}

}  // namespace

at::Tensor RotaryFrequencies(int head_dim) {
  const int64_t half = head_dim / 2;
  return at::pow(10000.0, -at::arange(half, at::kDouble) / static_cast<double>(half));
}

RotaryAngles MakeRotaryAngles(const at::Tensor& frequencies, int64_t first, int64_t count,
                              const at::TensorOptions& options) {
  const at::Tensor positions =
      at::arange(static_cast<double>(first), static_cast<double>(first + count), at::kDouble);
  const at::Tensor angles = positions.unsqueeze(1) * frequencies.unsqueeze(0);
  const at::Tensor sin = at::sin(angles);
  const c10::Device device = options.device();
  const at::ScalarType dtype = c10::typeMetaToScalarType(options.dtype());
  return RotaryAngles{ToDevice(at::cos(at::cat({angles, angles}, 1)), device, dtype),
                      ToDevice(at::cat({-sin, sin}, 1), device, dtype)};
}

at::Tensor ApplyRotary(const at::Tensor& x, const RotaryAngles& angles) {
  // x * cos + rotate_half(x) * sin with rotate_half(x) = (-x2, x1); the sign
  // lives in angles.sin, the swap of halves is a roll.
  return x * angles.cos + x.roll(x.size(-1) / 2, -1) * angles.sin;
}

at::Tensor FutureMask(int64_t window, const at::TensorOptions& options) {
  return at::ones({window, window}, options.dtype(at::kBool)).triu(1);
}

at::Tensor CausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const RotaryAngles& angles, const at::Tensor& future,
                           const std::vector<CachedKeysValues>& cached) {
  const int64_t window = q.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  std::map<const RotaryAngles*, at::Tensor> rotated;  // at most two distinct
  auto queries = [&](const RotaryAngles* a) -> const at::Tensor& {
    at::Tensor& entry = rotated[a];
    if (!entry.defined()) entry = ApplyRotary(q, *a) * scale;
    return entry;
  };
  std::vector<at::Tensor> scores;
  scores.reserve(cached.size() + 1);
  for (const CachedKeysValues& segment : cached) {
    scores.push_back(Scores(queries(segment.query_angles), segment.keys));
  }
  scores.push_back(at::matmul(queries(&angles), k.transpose(-2, -1))
                       .masked_fill(future, -std::numeric_limits<float>::infinity()));
  const at::Tensor probs = at::softmax(at::cat(scores, -1), -1);

  at::Tensor out = at::matmul(probs.narrow(-1, probs.size(-1) - window, window), v);
  int64_t offset = 0;
  for (const CachedKeysValues& segment : cached) {
    const int64_t n = segment.keys.size(2);
    out = out + Mix(probs.narrow(-1, offset, n), segment.values);
    offset += n;
  }
  return out;
}

}  // namespace dfmpc::worldmodel
