// Physical scales through the library's internal PerturbedModel equal a
// model edited by hand in its XML, bit for bit.
#include "perturbed_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "model_loader.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::envs {
namespace {

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("'" + from + "' not in the XML");
  return text.replace(at, from.size(), to);
}

std::shared_ptr<const mjModel> Load(const std::string& xml) {
  return std::shared_ptr<const mjModel>(LoadModelFromXml(xml, "test").release(), ModelDeleter());
}

// The pendulum's angle and velocity over `steps` steps of a varying torque.
std::vector<double> Simulate(const mjModel* model, int steps) {
  DataPtr data(mj_makeData(model));
  data->qpos[0] = 2.0;
  std::vector<double> trace;
  for (int t = 0; t < steps; ++t) {
    data->ctrl[0] = std::sin(0.3 * t);
    mj_step(model, data.get());
    trace.push_back(data->qpos[0]);
    trace.push_back(data->qvel[0]);
  }
  return trace;
}

class PerturbedModelTest : public testing::Test {
 protected:
  const std::string xml_ = task::LoadTaskSpec("pendulum_swingup").mjcf_text;
  const std::shared_ptr<const mjModel> nominal_ = Load(xml_);
};

TEST_F(PerturbedModelTest, DampingScaleEqualsAHandEditedModel) {
  PerturbedModel model(nominal_);
  Perturbation damped;
  damped.damping = 2.0;
  model.Apply(damped);
  const auto edited = Load(Replace(xml_, "damping=\"0.1\"", "damping=\"0.2\""));
  EXPECT_EQ(model.get()->dof_damping[0], edited->dof_damping[0]);
  EXPECT_EQ(Simulate(model.get(), 200), Simulate(edited.get(), 200));
  EXPECT_NE(Simulate(model.get(), 200), Simulate(nominal_.get(), 200));
}

// Doubling the mass doubles the inertia too; mj_setConst then derives the
// inverse weights as the compiler does.
TEST_F(PerturbedModelTest, MassScaleEqualsAHandEditedModel) {
  PerturbedModel model(nominal_);
  Perturbation heavy;
  heavy.mass = 2.0;
  model.Apply(heavy);
  const auto edited =
      Load(Replace(Replace(xml_, "mass=\"1\"", "mass=\"2\""), "diaginertia=\"1e-5 1e-5 1e-5\"",
                   "diaginertia=\"2e-5 2e-5 2e-5\""));
  const mjModel* m = model.get();
  EXPECT_EQ(m->body_mass[1], edited->body_mass[1]);
  EXPECT_EQ(m->body_inertia[3], edited->body_inertia[3]);
  EXPECT_EQ(m->dof_invweight0[0], edited->dof_invweight0[0]);
  EXPECT_EQ(m->body_invweight0[2], edited->body_invweight0[2]);
  EXPECT_EQ(Simulate(m, 200), Simulate(edited.get(), 200));
}

TEST_F(PerturbedModelTest, ScalesStartFromTheNominalValuesEveryTime) {
  PerturbedModel model(nominal_);
  EXPECT_EQ(model.get(), nominal_.get());
  Perturbation p;
  p.damping = 2.0;
  model.Apply(p);
  EXPECT_NE(model.get(), nominal_.get());
  p.damping = 4.0;
  model.Apply(p);  // 0.1 * 4, not 0.1 * 2 * 4
  EXPECT_EQ(model.get()->dof_damping[0],
            Load(Replace(xml_, "damping=\"0.1\"", "damping=\"0.4\""))->dof_damping[0]);
  model.Apply(Perturbation());
  EXPECT_EQ(model.get(), nominal_.get());
  EXPECT_EQ(nominal_->dof_damping[0], 0.1);  // the shared model is never written
}

TEST(PerturbedModelFrictionTest, FrictionAndGainScaleEveryGeomAndActuator) {
  const auto nominal = Load(task::LoadTaskSpec("pointmass_maze").mjcf_text);
  PerturbedModel model(nominal);
  Perturbation p;
  p.friction = 0.5;
  p.gain = 3.0;
  model.Apply(p);
  const mjModel* m = model.get();
  ASSERT_GT(m->ngeom, 0);
  for (int i = 0; i < 3 * m->ngeom; ++i) {
    EXPECT_EQ(m->geom_friction[i], 0.5 * nominal->geom_friction[i]);
  }
  for (int i = 0; i < m->nv; ++i) {
    EXPECT_EQ(m->dof_frictionloss[i], 0.5 * nominal->dof_frictionloss[i]);
  }
  for (int i = 0; i < m->nu; ++i) {
    EXPECT_EQ(m->actuator_gainprm[i * mjNGAIN], 3.0 * nominal->actuator_gainprm[i * mjNGAIN]);
  }
}

}  // namespace
}  // namespace dfmpc::envs
