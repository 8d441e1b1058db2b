#include "task.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "model_loader.h"

namespace dfmpc::envs {
namespace {

using task::TaskTable;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A folder's MJCF is loaded from its file, so that what it includes or loads
// (meshes, textures, <include>) resolves beside it. A task carried by a model
// or dataset holds the MJCF's text alone.
std::shared_ptr<const mjModel> Compile(const task::TaskSpec& spec) {
  try {
    ModelPtr model = spec.mjcf_file.empty() ? LoadModelFromXml(spec.mjcf_text, spec.name)
                                            : LoadModelFromFile(spec.mjcf_file, spec.name);
    return std::shared_ptr<const mjModel>(model.release(), ModelDeleter());
  } catch (const std::runtime_error& error) {
    const bool reads_files =
        spec.mjcf_file.empty() && spec.mjcf_text.find("file=") != std::string::npos;
    throw std::invalid_argument(
        spec.root.Where("mjcf") + ": " + error.what() +
        (reads_files ? " (a model or dataset carries its task's MJCF but not the files the MJCF "
                       "includes or loads; give the task's folder, --task DIR)"
                     : ""));
  }
}

int PositiveInteger(const TaskTable& root, const std::string& key) {
  const int value = root.Integer(key);
  if (value < 1) root.Fail(key, "must be >= 1, got " + std::to_string(value));
  return value;
}

// A joint position or velocity beyond this is no robot's state (radians,
// metres, or degrees with `degrees`, and per second). MuJoCo resets a state
// past its own limit (1e10) silently, so a wild draw would run as a reset.
constexpr double kMaxInitialValue = 1e4;

// Settling runs at every reset; a longer one is an episode of its own.
constexpr int kMaxSettlePhysicsSteps = 10000;

void RequireStateScale(const TaskTable& entry, const std::string& key,
                       const std::vector<double>& values) {
  for (double value : values) {
    if (!(std::abs(value) <= kMaxInitialValue)) {
      entry.Fail(key, "must be finite and within +-10000 (a joint position or velocity)");
    }
  }
}

// An [[initial]] entry's `orientation = "uniform"` on a free or ball joint:
// a rotation drawn uniformly, as dm_control draws the quadruped's (four
// standard normals, normalised, are a uniform unit quaternion).
std::function<void(mjData*, Rng*)> OrientationDraw(const TaskTable& entry, const mjModel* model,
                                                   int joint) {
  const int type = model->jnt_type[joint];
  if (type != mjJNT_FREE && type != mjJNT_BALL) {
    entry.Fail("orientation", "joint '" + entry.Text("joint") + "' is not a free or ball joint");
  }
  if (entry.Text("orientation") != "uniform") {
    entry.Fail("orientation", "expected \"uniform\", got \"" + entry.Text("orientation") + "\"");
  }
  entry.RejectUnread();
  const int address = model->jnt_qposadr[joint] + (type == mjJNT_FREE ? 3 : 0);
  return [address](mjData* d, Rng* rng) {
    mjtNum* quaternion = d->qpos + address;
    for (int i = 0; i < 4; ++i) quaternion[i] = rng->Normal();
    mju_normalize4(quaternion);
  };
}

// One [[initial]] entry: offset + a uniform or normal draw, into a joint's
// position or velocity, or a mocap body's x and y at a polar draw.
std::function<void(mjData*, Rng*)> InitialDraw(const TaskTable& entry, const mjModel* model) {
  if (entry.Has("mocap")) {
    const int body = RequireId(model, mjOBJ_BODY, entry, "mocap");
    const int mocap = model->body_mocapid[body];
    if (mocap < 0) entry.Fail("mocap", "body '" + entry.Text("mocap") + "' is not a mocap body");
    const std::vector<double> angle = entry.Numbers("polar_angle");
    const std::vector<double> radius = entry.Numbers("polar_radius");
    entry.RejectUnread();
    if (angle.size() != 2 || angle[0] > angle[1])
      entry.Fail("polar_angle", "expected [lower, upper]");
    if (radius.size() != 2 || radius[0] > radius[1] || radius[0] < 0.0) {
      entry.Fail("polar_radius", "expected [lower, upper] with 0 <= lower <= upper");
    }
    RequireStateScale(entry, "polar_angle", angle);
    RequireStateScale(entry, "polar_radius", radius);
    return [mocap, angle, radius](mjData* d, Rng* rng) {
      const double a = rng->Uniform(angle[0], angle[1]);
      const double r = rng->Uniform(radius[0], radius[1]);
      d->mocap_pos[3 * mocap] = r * std::cos(a);
      d->mocap_pos[3 * mocap + 1] = r * std::sin(a);
    };
  }
  const int joint = RequireId(model, mjOBJ_JOINT, entry, "joint");
  const int type = model->jnt_type[joint];
  if (entry.Has("orientation")) return OrientationDraw(entry, model, joint);
  if (type != mjJNT_HINGE && type != mjJNT_SLIDE) {
    entry.Fail("joint", "'" + entry.Text("joint") +
                            "' is not a hinge or slide joint (a free or "
                            "ball joint takes orientation = \"uniform\")");
  }
  const bool velocity = entry.Boolean("velocity", false);
  const int address = velocity ? model->jnt_dofadr[joint] : model->jnt_qposadr[joint];
  const bool has_offset = entry.Has("offset");
  const double offset = entry.Number("offset", 0.0);
  const bool degrees = entry.Boolean("degrees", false);
  std::function<double(Rng*)> draw;
  if (entry.Has("uniform") == entry.Has("normal")) {
    entry.Fail("uniform", "give one distribution: uniform = [lower, upper] or normal = std");
  }
  RequireStateScale(entry, "offset", {offset});
  if (entry.Has("uniform")) {
    const std::vector<double> range = entry.Numbers("uniform");
    if (range.size() != 2 || range[0] > range[1]) entry.Fail("uniform", "expected [lower, upper]");
    RequireStateScale(entry, "uniform", range);
    draw = [range](Rng* rng) { return rng->Uniform(range[0], range[1]); };
  } else {
    const double std = entry.Number("normal");
    if (std < 0.0) entry.Fail("normal", "the standard deviation must be >= 0");
    RequireStateScale(entry, "normal", {std});
    draw = [std](Rng* rng) { return std * rng->Normal(); };
  }
  entry.RejectUnread();
  return [=](mjData* d, Rng* rng) {
    double value = draw(rng);
    if (degrees) value = value * kPi / 180.0;
    if (has_offset) value = offset + value;
    (velocity ? d->qvel : d->qpos)[address] = value;
  };
}

// A [reward] or [shaped_reward] table: [[factor]]s or an `expression`.
Quantity ParseReward(const TaskTable& table, const QuantityScope& scope,
                     const FormulaVariables& variables, const Quantity& success,
                     std::vector<std::shared_ptr<const RewardFormula>>* formulas) {
  const std::vector<TaskTable> factors = table.Tables("factor");
  if (!table.Has("expression")) {
    if (factors.empty()) {
      table.Fail("factor", "missing: at least one factor table, or an expression");
    }
    const Quantity product = RewardProduct(factors, scope, success);
    table.RejectUnread();
    return product;
  }
  if (!factors.empty())
    table.Fail("expression", "give [[factor]] tables or an expression, not both");
  auto formula = std::make_shared<const RewardFormula>(table, "expression", variables);
  table.RejectUnread();
  formulas->push_back(formula);
  return [formula](const mjModel* m, const mjData* d) { return (*formula)(m, d); };
}

// The [success] table: a quantity below a threshold, or an `expression`
// that holds (> 0.5; a comparison gives 1 or 0).
Quantity ParseSuccess(const TaskTable& table, const QuantityScope& scope,
                      const FormulaVariables& variables,
                      std::vector<std::shared_ptr<const RewardFormula>>* formulas) {
  if (table.Has("expression")) {
    auto formula = std::make_shared<const RewardFormula>(table, "expression", variables);
    table.RejectUnread();
    formulas->push_back(formula);
    return
        [formula](const mjModel* m, const mjData* d) { return (*formula)(m, d) > 0.5 ? 1.0 : 0.0; };
  }
  const Quantity quantity = ParseQuantity(table, scope, nullptr);
  const double below = table.Number("below");
  table.RejectUnread();
  return [quantity, below](const mjModel* model, const mjData* data) {
    return quantity(model, data) < below ? 1.0 : 0.0;
  };
}

}  // namespace

Task::Task(task::TaskSpec spec) : spec_(std::move(spec)), model_(Compile(spec_)) {
  const TaskTable& root = spec_.root;
  const mjModel* m = model_.get();
  root.Text("description", "");
  root.Text("mjcf");
  action_repeat_ = PositiveInteger(root, "action_repeat");
  // A cost formula's `dt` is read without MuJoCo (the planner builds
  // without it); it must agree with what MuJoCo compiled.
  const double dt = task::ControlTimestep(spec_);
  if (std::abs(dt - action_repeat_ * m->opt.timestep) > 1e-12 * dt) {
    root.Fail("mjcf", "its <option timestep> reads " + std::to_string(dt / action_repeat_) +
                          " s, but MuJoCo compiled " + std::to_string(m->opt.timestep) +
                          " s: an <include>d file sets it? Set it in the main file");
  }
  episode_physics_steps_ = PositiveInteger(root, "episode_physics_steps");
  settle_physics_steps_ = root.Integer("settle_physics_steps", 0);
  if (settle_physics_steps_ < 0 || settle_physics_steps_ > kMaxSettlePhysicsSteps) {
    root.Fail("settle_physics_steps", "must be in 0.." + std::to_string(kMaxSettlePhysicsSteps) +
                                          ", got " + std::to_string(settle_physics_steps_));
  }
  camera_ = root.Text("camera", "");
  if (!camera_.empty()) RequireId(m, mjOBJ_CAMERA, root, "camera");

  std::map<std::string, Quantity> by_name;
  const std::vector<TaskTable> observations = root.Tables("observation");
  if (observations.empty()) root.Fail("observation", "missing: at least one [[observation]]");
  const double inf = std::numeric_limits<double>::infinity();
  lower_ = upper_ = scale_ = Eigen::VectorXd(observations.size());
  for (std::size_t i = 0; i < observations.size(); ++i) {
    const TaskTable& feature = observations[i];
    const std::string name = feature.Text("name");
    if (by_name.count(name)) feature.Fail("name", "feature '" + name + "' appears twice");
    features_.push_back(ParseSensorReading(feature, m));
    by_name[name] = features_.back();
    feature_names_.push_back(name);
    scale_[i] = feature.Number("scale", 1.0);
    if (scale_[i] <= 0.0) feature.Fail("scale", "must be > 0");
    lower_[i] = -inf;
    upper_[i] = inf;
    if (feature.Has("bounds")) {
      const std::vector<double> bounds = feature.Numbers("bounds");
      if (bounds.size() != 2 || bounds[0] >= bounds[1]) {
        feature.Fail("bounds", "expected [lower, upper] with lower < upper");
      }
      lower_[i] = bounds[0];
      upper_[i] = bounds[1];
    }
    feature.RejectUnread();
  }

  for (const std::string& actuator : root.Texts("actions")) {
    const int id = mj_name2id(m, mjOBJ_ACTUATOR, actuator.c_str());
    if (id < 0) root.Fail("actions", "the MJCF has no actuator '" + actuator + "'");
    if (std::find(actuators_.begin(), actuators_.end(), id) != actuators_.end()) {
      root.Fail("actions", "names actuator '" + actuator + "' twice");
    }
    actuators_.push_back(id);
  }
  if (actuators_.empty()) root.Fail("actions", "must name at least one actuator");

  for (const TaskTable& entry : root.Tables("initial")) initial_.push_back(InitialDraw(entry, m));

  const QuantityScope scope{m, &by_name};
  FormulaVariables variables;
  for (std::size_t i = 0; i < features_.size(); ++i) {
    const bool bounded = std::isfinite(lower_[i]);
    variables.Add(feature_names_[i], features_[i], bounded ? lower_[i] : -scale_[i],
                  bounded ? upper_[i] : scale_[i]);
  }
  const std::vector<std::string> actuator_names = root.Texts("actions");
  for (std::size_t k = 0; k < actuators_.size(); ++k) {
    const int id = actuators_[k];
    variables.Add(
        "action." + actuator_names[k],
        [id](const mjModel*, const mjData* d) { return d->ctrl[id]; }, -1.0, 1.0);
  }
  for (const TaskTable& quantity : root.Tables("quantity")) {
    const std::string name = quantity.Text("name");
    const auto& names = variables.names;
    if (name == "success" || std::find(names.begin(), names.end(), name) != names.end()) {
      quantity.Fail("name", "'" + name + "' is already a feature or quantity");
    }
    // Its range is unknown: it is probed at the initial states.
    variables.Add(name, ParseQuantity(quantity, scope, nullptr), kNaN, kNaN);
    quantity.RejectUnread();
  }
  if (root.Has("success"))
    success_ = ParseSuccess(root.Table("success"), scope, variables, &formulas_);
  if (success_) variables.Add("success", success_, 0.0, 1.0);
  reward_ = ParseReward(root.Table("reward"), scope, variables, success_, &formulas_);
  if (root.Has("shaped_reward")) {
    shaped_reward_ =
        ParseReward(root.Table("shaped_reward"), scope, variables, success_, &formulas_);
  }
  for (int sensor = 0; sensor < m->nsensor; ++sensor) {
    if (m->sensor_needstage[sensor] == mjSTAGE_ACC) needs_acceleration_ = true;
  }
  ProbeFormulas();
}

void Task::ProbeFormulas() const {
  if (formulas_.empty()) return;
  const mjModel* m = model_.get();
  const DataPtr data(mj_makeData(m));
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    mj_resetData(m, data.get());
    Rng rng(seed);
    Initialize(data.get(), &rng);
    Sense(m, data.get());
    for (const auto& formula : formulas_) formula->Probe(m, data.get(), 8, &rng);
  }
}

std::vector<std::pair<std::string, double>> Task::FormulaValues(const mjModel* model,
                                                                const mjData* data) const {
  std::vector<std::pair<std::string, double>> values;
  for (const auto& formula : formulas_)
    values.emplace_back(formula->where(), (*formula)(model, data));
  return values;
}

void Task::ObservationBounds(Eigen::VectorXd* lower, Eigen::VectorXd* upper) const {
  *lower = lower_;
  *upper = upper_;
}

void Task::Actuate(const Eigen::VectorXd& action, mjData* data) const {
  for (int i = 0; i < action_size(); ++i) data->ctrl[actuators_[i]] = action[i];
}

void Task::Initialize(mjData* data, Rng* rng) const {
  for (const auto& draw : initial_) draw(data, rng);
  // dm_control's convention for robots that start off the ground: the drawn
  // pose falls and comes to rest, unactuated, before the episode's clock
  // starts. The nominal model settles it, so that a perturbed environment
  // starts where the nominal one does.
  for (int i = 0; i < settle_physics_steps_; ++i) mj_step(model_.get(), data);
  data->time = 0.0;
}

void Task::Sense(const mjModel* model, mjData* data) const {
  if (needs_acceleration_) {
    // mj_forward stores its accelerations as the solver's next warm start;
    // keep the one mj_step left, which the state records, so that a state
    // restored and sensed again steps on bit for bit.
    std::vector<mjtNum> warmstart(data->qacc_warmstart, data->qacc_warmstart + model->nv);
    mj_forward(model, data);
    std::copy(warmstart.begin(), warmstart.end(), data->qacc_warmstart);
    return;
  }
  // What position and velocity sensors read, without mj_fwdPosition's
  // inertia, collision and constraint stages (mj_step redoes them anyway).
  // A physics step with it costs 1.0-1.13x one with the poses-only update
  // the C++ tasks used; with mj_fwdPosition + mj_fwdVelocity 1.4-1.5x, and
  // the oracle's rollouts are mostly physics steps.
  mj_kinematics(model, data);
  mj_comPos(model, data);
  mj_camlight(model, data);
  mj_tendon(model, data);
  mj_transmission(model, data);
  mj_sensorPos(model, data);
  mj_comVel(model, data);
  mj_sensorVel(model, data);
}

void Task::Observe(const mjData* data, Eigen::Ref<Eigen::VectorXd> observation) const {
  for (int i = 0; i < observation_size(); ++i) observation[i] = features_[i](model_.get(), data);
}

double Task::Reward(const mjModel* model, const mjData* data) const { return reward_(model, data); }

double Task::ShapedReward(const mjModel* model, const mjData* data) const {
  return shaped_reward_ ? shaped_reward_(model, data) : reward_(model, data);
}

bool Task::IsSuccess(const mjModel* model, const mjData* data) const {
  return success_ && success_(model, data) > 0.5;
}

}  // namespace dfmpc::envs
