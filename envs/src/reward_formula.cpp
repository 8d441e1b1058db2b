#include "reward_formula.h"

#include <cmath>
#include <utility>

namespace dfmpc::envs {

void FormulaVariables::Add(const std::string& name, Quantity reader, double low, double high) {
  names.push_back(name);
  readers.push_back(std::move(reader));
  lower.push_back(low);
  upper.push_back(high);
}

RewardFormula::RewardFormula(const task::TaskTable& table, const std::string& key,
                             const FormulaVariables& variables)
    : expression_(table.Text(key), variables.names, table.Where(key)),
      readers_(variables.readers),
      lower_(variables.lower),
      upper_(variables.upper),
      values_(readers_.size(), 0.0) {
  for (size_t i = 0; i < readers_.size(); ++i) {
    if (!expression_.Reads(static_cast<int>(i))) readers_[i] = nullptr;
  }
}

double RewardFormula::operator()(const mjModel* model, const mjData* data) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  // A reader may evaluate another formula (`success`), with its own lock.
  for (size_t i = 0; i < readers_.size(); ++i) {
    if (readers_[i]) values_[i] = readers_[i](model, data);
  }
  return expression_.Evaluate(values_.data());
}

void RewardFormula::Probe(const mjModel* model, const mjData* data, int count, Rng* rng) const {
  std::vector<double> state(readers_.size(), 0.0);
  for (size_t i = 0; i < readers_.size(); ++i) {
    if (readers_[i]) state[i] = readers_[i](model, data);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  expression_.Probe(state.data());
  std::vector<double> point(state.size());
  for (int probe = 0; probe < count; ++probe) {
    for (size_t i = 0; i < point.size(); ++i) {
      const bool ranged = std::isfinite(lower_[i]) && std::isfinite(upper_[i]);
      point[i] = ranged ? rng->Uniform(lower_[i], upper_[i]) : state[i];
    }
    expression_.Probe(point.data());
  }
}

}  // namespace dfmpc::envs
