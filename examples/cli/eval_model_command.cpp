// dfmpc eval-model: open-loop prediction quality on held-out episodes.
//
// For several start points per validation episode, S real tokens are the
// context and the model generates the next H tokens (pyramid schedule, exact
// cache) with the real future actions imposed as known features; the
// generated observations are compared with the real ones at every horizon.
// The one-step MLP baseline, when given, rolls out on the same actions.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "dataset_tokens.h"
#include "dfmpc/envs/dataset.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/observation_chain.h"
#include "dfmpc/worldmodel/sampler.h"
#include "output_path.h"
#include "plot/plot.h"
#include "progress_bar.h"
#include "statistics.h"
#include "table.h"

namespace dfmpc::cli {
namespace {

constexpr int64_t kChunk = 32;  // windows generated together
// Seed offset between the samples averaged for one window (more than any
// window index, so no two draws share a seed).
constexpr uint64_t kSampleSeedStride = 1000003;
constexpr double kDegreesPerRadian = 57.29577951308232;

struct EvalModelOptions {
  std::string model;
  std::string mlp;
  std::string data;
  int context = 8;
  int horizon = 32;
  int steps = 0;  // K; 0: the model's (a distilled model's K, else 16)
  double uncertainty = 1.0;
  int samples = 1;
  bool no_chain = false;
  bool per_feature = false;
  int episodes = 0;  // 0: every validation episode
  int starts = 4;
  double validation_fraction = 0.1;
  uint64_t seed = 0;
  int threads = 1;
  std::string csv;
  std::string plot;
};

// Errors of one model's predictions, each [windows, H].
struct HorizonErrors {
  std::string name;
  at::Tensor nrmse;      // RMSE over observation features, in normalized units
  at::Tensor feature;    // [windows, H, obs] absolute error per feature, normalized units
  at::Tensor angle_deg;  // pendulum angle error; undefined for other tasks
};

// Windows of `length` tokens, `starts` per episode evenly spread over the
// possible start points: [N, length, d].
at::Tensor EvaluationWindows(const std::vector<at::Tensor>& episodes, int64_t length,
                             int64_t starts) {
  std::vector<at::Tensor> windows;
  for (const at::Tensor& episode : episodes) {
    const int64_t last = episode.size(0) - length;
    if (last < 0) continue;
    const int64_t count = std::min(starts, last + 1);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t start = count == 1 ? 0 : (i * last + (count - 1) / 2) / (count - 1);
      windows.push_back(episode.slice(0, start, start + length));
    }
  }
  if (windows.empty()) {
    throw std::invalid_argument("no validation episode holds --context + --horizon = " +
                                std::to_string(length) + " tokens");
  }
  return at::stack(windows);
}

// The generated observations [N, H, obs] (unnormalized) of the diffusion
// model, with the windows' real actions imposed on the generated tokens;
// with `samples` > 1 the mean of that many samples per window.
at::Tensor PredictDiffusion(worldmodel::Checkpoint& checkpoint, const at::Tensor& windows,
                            int64_t context, const worldmodel::SampleOptions& sample, int samples,
                            ProgressBar& bar) {
  const worldmodel::ModelInfo& info = checkpoint.info;
  const worldmodel::NoiseSchedule schedule(info.num_timesteps, info.beta);
  const worldmodel::Sampler sampler(*checkpoint.model, schedule);
  const at::Tensor normalized = checkpoint.normalizer.Normalize(windows);
  at::Tensor mask = at::zeros({sample.horizon, info.layout.token_dim()}, at::kBool);
  mask.slice(1, 0, info.layout.action_dim).fill_(true);
  std::vector<at::Tensor> predictions;
  for (int64_t first = 0; first < windows.size(0); first += kChunk) {
    const at::Tensor chunk = normalized.slice(0, first, first + kChunk);
    const worldmodel::KnownFeatures known{mask, chunk.slice(1, context)};
    at::Tensor sum;
    for (int s = 0; s < samples; ++s) {
      worldmodel::SampleOptions options = sample;
      options.seed = sample.seed + static_cast<uint64_t>(first) + kSampleSeedStride * s;
      const at::Tensor tokens =
          sampler.Generate(chunk.slice(1, 0, context), chunk.size(0), options, nullptr, &known)
              .tokens;
      sum = s == 0 ? tokens : sum + tokens;
    }
    predictions.push_back(checkpoint.normalizer.Denormalize(sum / samples));
    bar.Update(first + chunk.size(0));
  }
  const at::Tensor last_real =
      windows.select(1, context - 1)
          .narrow(1, info.layout.observation_offset(), info.layout.observation_dim);
  return worldmodel::TokenObservations(info.layout, at::cat(predictions), last_real);
}

// The MLP's rollout observations [N, H, obs] (unnormalized) from the last
// context token on the windows' real actions.
at::Tensor PredictMlp(worldmodel::MlpCheckpoint& checkpoint, const at::Tensor& windows,
                      int64_t context) {
  const worldmodel::TokenLayout& layout = checkpoint.info.config.layout;
  const at::Tensor normalized = checkpoint.normalizer.Normalize(windows);
  const at::Tensor future = normalized.slice(1, context);
  const at::Tensor tokens = checkpoint.model->Rollout(normalized.select(1, context - 1),
                                                      future.slice(2, 0, layout.action_dim));
  return checkpoint.normalizer.Denormalize(tokens).slice(2, layout.observation_offset());
}

// Pendulum observations are [cos, sin, angular velocity].
at::Tensor PendulumAngle(const at::Tensor& observations) {
  return at::atan2(observations.select(2, 1), observations.select(2, 0));
}

HorizonErrors Errors(std::string name, const at::Tensor& predicted, const at::Tensor& truth,
                     const at::Tensor& observation_scale, bool pendulum) {
  HorizonErrors errors{std::move(name), {}, {}, {}};
  errors.feature = ((predicted - truth) / observation_scale).abs();
  errors.nrmse = errors.feature.pow(2).mean(2).sqrt();
  if (pendulum) {
    const at::Tensor difference = PendulumAngle(predicted) - PendulumAngle(truth);
    errors.angle_deg = at::atan2(difference.sin(), difference.cos()).abs() * kDegreesPerRadian;
  }
  return errors;
}

std::vector<std::string> Header(const std::vector<HorizonErrors>& models) {
  std::vector<std::string> header{"h"};
  for (const HorizonErrors& m : models) {
    header.push_back(m.name + "_nrmse_mean");
    header.push_back(m.name + "_nrmse_median");
    if (m.angle_deg.defined()) {
      header.push_back(m.name + "_angle_deg_mean");
      header.push_back(m.name + "_angle_deg_median");
    }
  }
  return header;
}

// The values of a 1-D tensor, as doubles.
std::vector<double> Values(const at::Tensor& tensor) {
  const at::Tensor doubles = tensor.to(at::kDouble).contiguous();
  return {doubles.data_ptr<double>(), doubles.data_ptr<double>() + doubles.numel()};
}

// Mean and median over windows at horizon index `h` (0-based).
void AddStatistics(const at::Tensor& errors, int64_t h, int decimals,
                   std::vector<std::string>& row) {
  const at::Tensor column = errors.select(1, h).to(at::kDouble);
  row.push_back(FormatFixed(column.mean().item<double>(), decimals));
  row.push_back(FormatFixed(Median(Values(column)), decimals));
}

std::vector<std::string> Row(const std::vector<HorizonErrors>& models, int64_t h) {
  std::vector<std::string> row{std::to_string(h + 1)};
  for (const HorizonErrors& m : models) {
    AddStatistics(m.nrmse, h, 4, row);
    if (m.angle_deg.defined()) AddStatistics(m.angle_deg, h, 2, row);
  }
  return row;
}

// Horizons shown in printed tables: powers of two and the last one.
bool Shown(int64_t h, int64_t horizon) { return ((h + 1) & h) == 0 || h + 1 == horizon; }

// Median absolute error of every observation feature against the horizon,
// in normalized units: which part of the state a model gets wrong.
void PrintPerFeature(const HorizonErrors& m, int64_t horizon) {
  std::vector<std::string> header{"h"};
  for (int64_t f = 0; f < m.feature.size(2); ++f) header.push_back("o" + std::to_string(f));
  Table table(header);
  for (int64_t h = 0; h < horizon; ++h) {
    if (!Shown(h, horizon)) continue;
    const at::Tensor errors = m.feature.select(1, h);  // [windows, features]
    std::vector<std::string> row{std::to_string(h + 1)};
    for (int64_t f = 0; f < errors.size(1); ++f) {
      row.push_back(FormatFixed(Median(Values(errors.select(1, f))), 4));
    }
    table.AddRow(row);
  }
  std::cout << "\n" << m.name << ": median absolute error per observation feature (normalized)\n";
  table.Print(std::cout);
}

void WritePlot(const std::string& path, const std::vector<HorizonErrors>& models) {
  plot::Panel nrmse{"Open-loop prediction error on held-out episodes",
                    "horizon h (steps)",
                    "normalized RMSE (mean over starts)",
                    true,
                    {}};
  plot::Panel angle{"Pendulum angle error",
                    "horizon h (steps)",
                    "angle error, degrees (mean over starts)",
                    true,
                    {}};
  for (const HorizonErrors& m : models) {
    const at::Tensor mean = m.nrmse.mean(0).to(at::kDouble).contiguous();
    plot::Series series{
        m.name,
        {},
        std::vector<double>(mean.data_ptr<double>(), mean.data_ptr<double>() + mean.numel())};
    for (int64_t h = 1; h <= mean.numel(); ++h) series.x.push_back(static_cast<double>(h));
    nrmse.log_y = nrmse.log_y && mean.min().item<double>() > 0;
    nrmse.series.push_back(series);
    if (m.angle_deg.defined()) {
      const at::Tensor degrees = m.angle_deg.mean(0).to(at::kDouble).contiguous();
      series.y.assign(degrees.data_ptr<double>(), degrees.data_ptr<double>() + degrees.numel());
      angle.log_y = angle.log_y && degrees.min().item<double>() > 0;
      angle.series.push_back(series);
    }
  }
  std::vector<plot::Panel> panels{nrmse};
  if (!angle.series.empty()) panels.push_back(angle);
  plot::WritePlotPng(path, panels);
}

void RunEvalModel(const EvalModelOptions& o) {
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1");
  if (o.context < 1 || o.horizon < 1 || o.steps < 0 || o.starts < 1 || o.samples < 1 ||
      o.episodes < 0) {
    throw std::invalid_argument(
        "--context, --horizon, --starts-per-episode and --samples must be >= 1, --steps and "
        "--episodes >= 0");
  }
  at::set_num_threads(o.threads);
  at::NoGradGuard no_grad;

  const envs::Dataset dataset = envs::ReadDataset(o.data, /*load_frames=*/false);
  worldmodel::Checkpoint checkpoint = worldmodel::LoadCheckpoint(o.model, {dataset.info.task, 0});
  if (checkpoint.info.action_repeat != dataset.info.action_repeat) {
    throw std::invalid_argument(o.model + " was trained on " +
                                std::to_string(checkpoint.info.action_repeat) +
                                " physics step(s) per control step, " + o.data + " holds " +
                                std::to_string(dataset.info.action_repeat));
  }
  const worldmodel::TokenLayout& layout = checkpoint.info.layout;
  if (layout.action_dim != dataset.info.action_size ||
      layout.observation_dim != dataset.info.observation_size) {
    throw std::invalid_argument(o.model + " expects " + std::to_string(layout.action_dim) +
                                " action and " + std::to_string(layout.observation_dim) +
                                " observation features, " + o.data + " has " +
                                std::to_string(dataset.info.action_size) + " and " +
                                std::to_string(dataset.info.observation_size));
  }
  const int span = o.context + o.horizon;
  if (span > checkpoint.model->config().max_positions) {
    throw std::invalid_argument("--context + --horizon = " + std::to_string(span) +
                                " tokens exceed the model's " + "attention span of " +
                                std::to_string(checkpoint.model->config().max_positions) +
                                " tokens (its training window)");
  }
  // Held-out windows of `span` tokens in a layout; the same episodes and
  // start points whatever the layout.
  auto validation_windows = [&](const worldmodel::TokenLayout& token_layout) {
    std::vector<at::Tensor> episodes =
        pipelines::SplitEpisodes(pipelines::EpisodeTokenSequences(dataset, token_layout),
                                o.validation_fraction, o.data)
            .validation;
    if (o.episodes > 0 && static_cast<size_t>(o.episodes) < episodes.size()) {
      episodes.resize(o.episodes);
    }
    return EvaluationWindows(episodes, span, o.starts);
  };
  const at::Tensor windows = validation_windows(layout);
  const int64_t observation_offset = layout.observation_offset();
  const at::Tensor truth =
      windows.slice(1, o.context).narrow(2, observation_offset, layout.observation_dim);
  const at::Tensor observation_scale =
      checkpoint.normalizer.scale().narrow(0, observation_offset, layout.observation_dim);
  const bool pendulum = dataset.info.task == "pendulum_swingup";
  std::fprintf(stderr, "eval-model: %s, %lld windows of %d + %d held-out tokens\n",
               dataset.info.task.c_str(), static_cast<long long>(windows.size(0)), o.context,
               o.horizon);

  worldmodel::SampleOptions sample;
  sample.schedule = worldmodel::ScheduleKind::kPyramid;
  sample.num_levels = worldmodel::SamplingLevels(checkpoint.info, o.steps);
  sample.uncertainty = o.uncertainty;
  sample.horizon = o.horizon;
  sample.cache_mode = worldmodel::CacheMode::kExact;
  sample.prediction = checkpoint.info.prediction;
  sample.seed = o.seed;
  std::unique_ptr<worldmodel::ObservationChain> chain;
  if (checkpoint.info.layout.observation_deltas && !o.no_chain) {
    chain = std::make_unique<worldmodel::ObservationChain>(checkpoint.info.layout,
                                                           checkpoint.normalizer);
    sample.chain = chain.get();
  }
  ProgressBar bar("eval-model", windows.size(0), "windows");
  std::vector<HorizonErrors> models{
      Errors("df", PredictDiffusion(checkpoint, windows, o.context, sample, o.samples, bar), truth,
             observation_scale, pendulum)};
  bar.Finish();
  if (!o.mlp.empty()) {
    const worldmodel::TokenLayout plain =
        pipelines::DatasetLayout(dataset, /*observation_deltas=*/false);
    worldmodel::MlpCheckpoint mlp =
        worldmodel::LoadMlpCheckpoint(o.mlp, {dataset.info.task, plain.token_dim()});
    models.push_back(Errors("mlp", PredictMlp(mlp, validation_windows(plain), o.context), truth,
                            observation_scale, pendulum));
  }

  Table printed(Header(models)), all(Header(models));
  for (int64_t h = 0; h < o.horizon; ++h) {
    if (Shown(h, o.horizon)) printed.AddRow(Row(models, h));
    all.AddRow(Row(models, h));
  }
  printed.Print(std::cout);
  if (o.per_feature) {
    for (const HorizonErrors& m : models) PrintPerFeature(m, o.horizon);
  }
  if (!o.csv.empty()) all.WriteCsv(o.csv);
  if (!o.plot.empty()) WritePlot(o.plot, models);
}

}  // namespace

void AddEvalModelCommand(CLI::App& app) {
  auto o = std::make_shared<EvalModelOptions>();
  CLI::App* cmd = app.add_subcommand(
      "eval-model", "Open-loop prediction error against horizon on held-out episodes");
  cmd->add_option("--model", o->model, "diffusion-forcing model from `dfmpc train`")->required();
  cmd->add_option("--mlp", o->mlp, "also evaluate this MLP baseline from `dfmpc train-mlp`");
  cmd->add_option("--data", o->data, "the HDF5 dataset the models were trained on")->required();
  cmd->add_option("--context", o->context, "real context tokens (S)")->capture_default_str();
  cmd->add_option("--horizon", o->horizon, "generated tokens (H)")->capture_default_str();
  cmd->add_option("--steps", o->steps,
                  "sampling levels K (0: the model's, a distilled model's K, else 16)")
      ->capture_default_str();
  cmd->add_option("--uncertainty", o->uncertainty,
                  "pyramid slope u: levels between neighbouring tokens (K: autoregressive)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--samples", o->samples,
                  "samples per window; their mean is the prediction (1: one sample)")
      ->capture_default_str();
  cmd->add_flag("--no-chain", o->no_chain,
                "keep generated observations as sampled instead of linking each to the one "
                "before plus its change (ablation)");
  cmd->add_flag("--per-feature", o->per_feature,
                "also print each observation feature's median error (order as in envs/env.h)");
  cmd->add_option("--episodes", o->episodes, "validation episodes used (0: all)")
      ->capture_default_str();
  cmd->add_option("--starts-per-episode", o->starts, "start points per episode")
      ->capture_default_str();
  cmd->add_option("--validation-fraction", o->validation_fraction,
                  "fraction of episodes held out in training (the last ones)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the sampling noise")->capture_default_str();
  cmd->add_option("--threads", o->threads, "intra-op threads")->capture_default_str();
  cmd->add_option("--csv", o->csv, "write every horizon's errors here")
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--plot", o->plot, "write a PNG of error against horizon here")
      ->check(OutputFileInExistingDirectory());
  cmd->callback([o] { RunEvalModel(*o); });
}

}  // namespace dfmpc::cli
