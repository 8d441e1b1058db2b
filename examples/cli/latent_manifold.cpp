#include "latent_manifold.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <stdexcept>

#include "dfmpc/envs/dataset.h"
#include "frame_latents.h"
#include "plot/plot.h"
#include "table.h"

namespace dfmpc::cli {
namespace {

constexpr int64_t kQueryBatch = 128;

}  // namespace

LatentManifold::LatentManifold(const std::string& path, worldmodel::VideoModel& model) {
  const envs::Dataset data = envs::ReadDataset(path);
  if (data.info.task != model.world.info.task) {
    throw std::invalid_argument("--manifold-data " + path + " is " + data.info.task +
                                ", the model " + model.world.info.task);
  }
  worldmodel::FrameAutoencoderImpl& tokenizer = *model.tokenizer.model;
  pipelines::CheckFramesFit(data, path, tokenizer);
  c10::InferenceMode inference;
  const at::Tensor latents = pipelines::EncodeDatasetFrames(data, 0, data.num_steps(), tokenizer);
  mean_ = latents.mean(0);
  // One scale for all features (their RMS standard deviation): features the
  // data barely moves must not turn tiny generation noise into huge
  // distances, as per-feature scales would.
  scale_ = latents.var(0).mean().sqrt().clamp_min(1e-6);
  bank_ = (latents - mean_) / scale_;
}

at::Tensor LatentManifold::NearestDistances(const at::Tensor& latents) const {
  c10::InferenceMode inference;
  const at::Tensor queries = (latents - mean_) / scale_;
  std::vector<at::Tensor> nearest;
  for (int64_t begin = 0; begin < queries.size(0); begin += kQueryBatch) {
    const at::Tensor batch =
        queries.narrow(0, begin, std::min(kQueryBatch, queries.size(0) - begin));
    nearest.push_back(std::get<0>(at::cdist(batch, bank_).min(1)));
  }
  return at::cat(nearest);
}

void LatentManifold::Add(const at::Tensor& generated, const at::Tensor& real) {
  const at::Tensor g = NearestDistances(generated).to(at::kDouble);
  const at::Tensor r = NearestDistances(real).to(at::kDouble);
  if (generated_sum_.empty()) {
    generated_sum_.assign(g.size(0), 0.0);
    real_sum_.assign(g.size(0), 0.0);
  }
  if (static_cast<int64_t>(generated_sum_.size()) != g.size(0) || r.size(0) != g.size(0)) {
    throw std::logic_error("LatentManifold: rollouts of different lengths");
  }
  for (int64_t h = 0; h < g.size(0); ++h) {
    generated_sum_[h] += g[h].item<double>();
    real_sum_[h] += r[h].item<double>();
  }
  ++rollouts_;
}

void LatentManifold::Write(const std::string& csv, const std::string& png,
                           const std::string& title) const {
  Table table({"h", "model_nn", "real_nn"});
  plot::Series model{"model", {}, {}}, real{"real frames", {}, {}};
  for (std::size_t h = 0; h < generated_sum_.size(); ++h) {
    const double g = generated_sum_[h] / rollouts_, r = real_sum_[h] / rollouts_;
    table.AddRow({std::to_string(h + 1), FormatFixed(g, 4), FormatFixed(r, 4)});
    model.x.push_back(h + 1);
    model.y.push_back(g);
    real.x.push_back(h + 1);
    real.y.push_back(r);
  }
  table.WriteCsv(csv);
  plot::WritePlotPng(png, {{title + ": distance to the nearest real latent",
                            "steps after the context",
                            "distance (RMS feature stds)",
                            false,
                            {model, real}}});
}

void LatentManifold::PrintSummary(std::ostream& out) const {
  Table table({"steps", "model nearest-latent distance", "real frames", "ratio"});
  const int64_t horizon = static_cast<int64_t>(generated_sum_.size());
  for (int64_t begin = 1, end = 10; begin <= horizon; begin = end + 1, end *= 10) {
    double g = 0.0, r = 0.0;
    const int64_t last = std::min(end, horizon);
    for (int64_t h = begin; h <= last; ++h) {
      g += generated_sum_[h - 1];
      r += real_sum_[h - 1];
    }
    table.AddRow({std::to_string(begin) + "-" + std::to_string(last),
                  FormatFixed(g / rollouts_ / (last - begin + 1), 3),
                  FormatFixed(r / rollouts_ / (last - begin + 1), 3), FormatFixed(g / r, 2)});
  }
  table.Print(out);
}

}  // namespace dfmpc::cli
