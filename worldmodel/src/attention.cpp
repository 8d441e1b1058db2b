#include "attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dfmpc/worldmodel/device.h"
#include "fused_attention.h"
#include "fused_rotary.h"

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

namespace {

// Tables [scales.size(), count, head_dim], one per scale, filled on the host
// (a per-call cost of a dozen small tensor operations otherwise).
RotaryAngles ScaledAngles(const at::Tensor& frequencies, int64_t first, int64_t count,
                          const std::vector<double>& scales, const at::TensorOptions& options) {
  const at::Tensor host_frequencies = frequencies.to(at::kCPU, at::kDouble).contiguous();
  const double* frequency = host_frequencies.data_ptr<double>();
  const int64_t half = host_frequencies.numel(), head_dim = 2 * half;
  const auto sizes = {static_cast<int64_t>(scales.size()), count, head_dim};
  at::Tensor cos = at::empty(sizes, at::kFloat), sin = at::empty(sizes, at::kFloat);
  float* cos_out = cos.data_ptr<float>();
  float* sin_out = sin.data_ptr<float>();
  for (double scale : scales) {
    for (int64_t p = 0; p < count; ++p) {
      const double position = static_cast<double>(first + p);
      for (int64_t i = 0; i < half; ++i) {
        const double angle = position * frequency[i];
        const double c = scale * std::cos(angle), s = scale * std::sin(angle);
        cos_out[i] = cos_out[half + i] = static_cast<float>(c);
        sin_out[i] = static_cast<float>(-s);  // rotate_half's sign
        sin_out[half + i] = static_cast<float>(s);
      }
      cos_out += head_dim;
      sin_out += head_dim;
    }
  }
  const c10::Device device = options.device();
  const at::ScalarType dtype = c10::typeMetaToScalarType(options.dtype());
  return RotaryAngles{ToDevice(cos, device, dtype), ToDevice(sin, device, dtype)};
}

}  // namespace

RotaryAngles MakeRotaryAngles(const at::Tensor& frequencies, int64_t first, int64_t count,
                              const at::TensorOptions& options, double scale) {
  const RotaryAngles angles = ScaledAngles(frequencies, first, count, {scale}, options);
  return RotaryAngles{angles.cos[0], angles.sin[0]};
}

RotaryAngles MakeWindowAngles(const at::Tensor& frequencies, int64_t first, int64_t count,
                              double query_scale, const at::TensorOptions& options) {
  const RotaryAngles angles = ScaledAngles(frequencies, first, count, {query_scale, 1.0}, options);
  const int64_t head_dim = angles.cos.size(2);
  return RotaryAngles{angles.cos.view({2, 1, 1, count, head_dim}),
                      angles.sin.view({2, 1, 1, count, head_dim})};
}

at::Tensor ApplyRotary(const at::Tensor& x, const RotaryAngles& angles) {
  // x * cos + rotate_half(x) * sin with rotate_half(x) = (-x2, x1); the sign
  // lives in angles.sin, the swap of halves is a roll.
  if (FusedRotaryApplies(x, angles)) return FusedRotary(x, angles);
  return x * angles.cos + x.roll(x.size(-1) / 2, -1) * angles.sin;
}

at::Tensor FutureMask(int64_t window, const at::TensorOptions& options) {
  return at::ones({window, window}, options.dtype(at::kBool)).triu(1);
}

at::Tensor CausalAttention(const std::vector<at::Tensor>& queries, const at::Tensor& k,
                           const at::Tensor& v, const at::Tensor& future,
                           const std::vector<CachedKeysValues>& cached) {
  if (FusedAttentionApplies(queries, k, v, cached)) {
    return FusedCausalAttention(queries, k, v, cached);
  }
  return BatchedCausalAttention(queries, k, v, future, cached);
}

at::Tensor BatchedCausalAttention(const std::vector<at::Tensor>& queries, const at::Tensor& k,
                                  const at::Tensor& v, const at::Tensor& future,
                                  const std::vector<CachedKeysValues>& cached) {
  const int64_t window = queries[0].size(2);
  std::vector<at::Tensor> scores;
  scores.reserve(cached.size() + 1);
  for (const CachedKeysValues& segment : cached) {
    scores.push_back(Scores(queries.at(segment.query_set), segment.keys));
  }
  scores.push_back(at::matmul(queries[0], k.transpose(-2, -1))
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
