#include "linear_products.h"

#include <ATen/ATen.h>

#include <chrono>
#include <stdexcept>
#include <utility>
#include <vector>

#include "statistics.h"

namespace dfmpc::cli {
namespace {

// (in, out) of every linear layer a model call runs, in order.
std::vector<std::pair<int64_t, int64_t>> LayerShapes(const worldmodel::TransformerConfig& c) {
  const int64_t width = c.width, hidden = static_cast<int64_t>(c.mlp_ratio) * c.width;
  std::vector<std::pair<int64_t, int64_t>> shapes = {{c.token_dim, width}};
  for (int l = 0; l < c.depth; ++l) {
    shapes.insert(shapes.end(), {{width, 3 * width}, {width, width}, {width, hidden}, {hidden, width}});
  }
  shapes.push_back({width, c.token_dim});
  return shapes;
}

}  // namespace

double LinearFlopsPerRow(const worldmodel::TransformerConfig& config) {
  double flops = 0.0;
  for (const auto& [in, out] : LayerShapes(config)) flops += 2.0 * static_cast<double>(in * out);
  return flops;
}

double LinearProductsMs(const worldmodel::TransformerConfig& config, int64_t rows,
                        bool bf16_blocks) {
  if (rows < 1) throw std::invalid_argument("LinearProductsMs: rows must be >= 1");
  const at::NoGradGuard no_grad;
  struct Layer {
    at::Tensor input, weight, bias;  // a bfloat16 layer's weight is [in, out], no bias
    bool bf16;
  };
  const auto shapes = LayerShapes(config);
  std::vector<Layer> layers;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [in, out] = shapes[i];
    const bool block_layer = i > 0 && i + 1 < shapes.size();
    if (bf16_blocks && block_layer) {
      layers.push_back({at::randn({rows, in}).to(at::kBFloat16),
                        at::randn({in, out}).to(at::kBFloat16), at::Tensor(), true});
    } else {
      layers.push_back({at::randn({rows, in}), at::randn({out, in}), at::randn({out}), false});
    }
  }
  const auto call = [&] {
    for (const Layer& layer : layers) {
      if (layer.bf16) {
        at::mm(layer.input, layer.weight);
      } else {
        at::linear(layer.input, layer.weight, layer.bias);
      }
    }
  };
  constexpr int kWarmUp = 3, kMinRepeats = 20;
  constexpr double kMinTotalMs = 50.0;
  for (int i = 0; i < kWarmUp; ++i) call();
  std::vector<double> times;
  double total = 0.0;
  while (static_cast<int>(times.size()) < kMinRepeats || total < kMinTotalMs) {
    const auto start = std::chrono::steady_clock::now();
    call();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    total += times.back();
  }
  return Percentile(times, 50);
}

}  // namespace dfmpc::cli
