#include "dfmpc/worldmodel/noise_schedule.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dfmpc::worldmodel {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Cumulative products of (1 - beta_t) for t = 0 .. T-1.
std::vector<double> LinearAlphaBar(int num_timesteps) {
  // Ho et al. (2020) endpoints, rescaled so that other T keep the same range.
  const double scale = 1000.0 / num_timesteps;
  const double beta_start = scale * 1e-4;
  const double beta_end = scale * 0.02;
  std::vector<double> alpha_bar(num_timesteps);
  double product = 1.0;
  for (int t = 0; t < num_timesteps; ++t) {
    const double beta =
        num_timesteps == 1 ? beta_end
                           : beta_start + (beta_end - beta_start) * t / (num_timesteps - 1);
    product *= 1.0 - beta;
    alpha_bar[t] = product;
  }
  return alpha_bar;
}

// Nichol & Dhariwal (2021): alpha-bar follows cos^2, betas clipped at 0.999.
std::vector<double> CosineAlphaBar(int num_timesteps) {
  constexpr double kOffset = 0.008;
  auto f = [&](double t) {
    const double c = std::cos((t / num_timesteps + kOffset) / (1.0 + kOffset) * kPi / 2.0);
    return c * c;
  };
  std::vector<double> alpha_bar(num_timesteps);
  double product = 1.0;
  for (int t = 0; t < num_timesteps; ++t) {
    const double beta = std::min(1.0 - f(t + 1) / f(t), 0.999);
    product *= 1.0 - beta;
    alpha_bar[t] = product;
  }
  return alpha_bar;
}

}  // namespace

BetaSchedule ParseBetaSchedule(const std::string& name) {
  if (name == "linear") return BetaSchedule::kLinear;
  if (name == "cosine") return BetaSchedule::kCosine;
  throw std::invalid_argument("unknown beta schedule '" + name + "' (expected linear or cosine)");
}

Prediction ParsePrediction(const std::string& name) {
  if (name == "v") return Prediction::kV;
  if (name == "x0") return Prediction::kX0;
  if (name == "eps") return Prediction::kEps;
  throw std::invalid_argument("unknown prediction '" + name + "' (expected v, x0 or eps)");
}

std::string PredictionName(Prediction prediction) {
  switch (prediction) {
    case Prediction::kV: return "v";
    case Prediction::kX0: return "x0";
    case Prediction::kEps: return "eps";
  }
  throw std::invalid_argument("invalid Prediction value");
}

NoiseSchedule::NoiseSchedule(int num_timesteps, BetaSchedule beta)
    : num_timesteps_(num_timesteps), beta_(beta) {
  if (num_timesteps < 1) {
    throw std::invalid_argument("number of training timesteps must be >= 1, got " +
                                std::to_string(num_timesteps));
  }
  std::vector<double> alpha_bar =
      beta == BetaSchedule::kLinear ? LinearAlphaBar(num_timesteps) : CosineAlphaBar(num_timesteps);
  alpha_bar_.reserve(num_timesteps + 1);
  alpha_bar_.push_back(1.0);
  alpha_bar_.insert(alpha_bar_.end(), alpha_bar.begin(), alpha_bar.end());
}

double NoiseSchedule::AlphaBar(int64_t timestep) const {
  if (timestep < -1 || timestep >= num_timesteps_) {
    throw std::out_of_range("timestep " + std::to_string(timestep) + " outside [-1, " +
                            std::to_string(num_timesteps_ - 1) + "]");
  }
  return alpha_bar_[timestep + 1];
}

int64_t NoiseSchedule::LevelTimestep(int level, int num_levels) const {
  // With more levels than timesteps, level 1 (and others) would map to
  // timestep -1: a noisy token treated as clean.
  if (num_levels > num_timesteps_) {
    throw std::invalid_argument("K = " + std::to_string(num_levels) +
                                " sampling levels exceed the " + std::to_string(num_timesteps_) +
                                " training timesteps of the noise schedule");
  }
  if (num_levels < 1 || level < 0 || level > num_levels) {
    throw std::out_of_range("level " + std::to_string(level) + " outside [0, " +
                            std::to_string(num_levels) + "]");
  }
  // Integer form of floor(-1 + level * T / K): exact, no rounding surprises.
  return -1 + static_cast<int64_t>(level) * num_timesteps_ / num_levels;
}

at::Tensor NoiseSchedule::AddNoise(const at::Tensor& x0, const at::Tensor& noise,
                                   const at::Tensor& alpha_bar) {
  return alpha_bar.sqrt() * x0 + (1.0 - alpha_bar).sqrt() * noise;
}

void NoiseSchedule::ToX0AndEps(Prediction prediction, const at::Tensor& x_t,
                               const at::Tensor& model_out, const at::Tensor& alpha_bar,
                               at::Tensor* x0, at::Tensor* eps) {
  const at::Tensor signal = alpha_bar.sqrt();
  const at::Tensor sigma = (1.0 - alpha_bar).sqrt();
  switch (prediction) {
    case Prediction::kV:
      *x0 = signal * x_t - sigma * model_out;
      *eps = sigma * x_t + signal * model_out;
      return;
    case Prediction::kX0:
      *x0 = model_out;
      *eps = (x_t - signal * model_out) / sigma;
      return;
    case Prediction::kEps:
      *eps = model_out;
      *x0 = (x_t - sigma * model_out) / signal;
      return;
  }
}

at::Tensor NoiseSchedule::Target(Prediction prediction, const at::Tensor& x0,
                                 const at::Tensor& eps, const at::Tensor& alpha_bar) {
  switch (prediction) {
    case Prediction::kV: return alpha_bar.sqrt() * eps - (1.0 - alpha_bar).sqrt() * x0;
    case Prediction::kX0: return x0;
    case Prediction::kEps: return eps;
  }
  throw std::invalid_argument("invalid Prediction value");
}

at::Tensor NoiseSchedule::DdimStep(const at::Tensor& x0, const at::Tensor& eps,
                                   const at::Tensor& ab_from, const at::Tensor& ab_to, double eta,
                                   const at::Tensor& noise) {
  if (eta == 0.0) return ab_to.sqrt() * x0 + (1.0 - ab_to).sqrt() * eps;
  // sigma^2 = eta^2 (1 - ab_to) / (1 - ab_from) * (1 - ab_from / ab_to).
  const at::Tensor variance = (eta * eta) * (1.0 - ab_to) / (1.0 - ab_from) *
                              (1.0 - ab_from / ab_to);
  const at::Tensor direction = (1.0 - ab_to - variance).clamp_min(0.0).sqrt();
  return ab_to.sqrt() * x0 + direction * eps + variance.sqrt() * noise;
}

}  // namespace dfmpc::worldmodel
