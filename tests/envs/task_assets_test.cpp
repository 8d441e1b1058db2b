// A task folder's MJCF may include other files and load meshes beside it
// (issue 26): the folder is loaded from disk. A task carried by a model holds
// the MJCF's text alone; its missing files are a clear error that names the
// way out.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::envs {
namespace {

namespace fs = std::filesystem;

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' is not in the file";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// A binary STL tetrahedron with 3 cm edges.
void WriteTetrahedron(const fs::path& path) {
  const float v[4][3] = {{0, 0, 0}, {0.03f, 0, 0}, {0, 0.03f, 0}, {0, 0, 0.03f}};
  const int faces[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  std::ofstream out(path, std::ios::binary);
  const std::string header(80, '\0');
  const std::uint32_t count = 4;
  const float normal[3] = {0, 0, 0};
  const std::uint16_t attributes = 0;
  out.write(header.data(), header.size());
  out.write(reinterpret_cast<const char*>(&count), sizeof(count));
  for (const auto& face : faces) {
    out.write(reinterpret_cast<const char*>(normal), sizeof(normal));
    for (int corner : face) out.write(reinterpret_cast<const char*>(v[corner]), sizeof(v[0]));
    out.write(reinterpret_cast<const char*>(&attributes), sizeof(attributes));
  }
}

// The pendulum's folder with its actuator moved into an included file and a
// mesh on the pole (massless for the physics: the pole's inertia is given).
fs::path PendulumWithAssets() {
  const task::TaskSpec pendulum = task::LoadTaskSpec("pendulum_swingup");
  const fs::path folder = fs::path(::testing::TempDir()) / "dfmpc_task_assets_test";
  fs::remove_all(folder);
  fs::create_directories(folder / "meshes");
  fs::create_directories(folder / "parts");
  WriteTetrahedron(folder / "meshes" / "tip.stl");
  std::string mjcf = pendulum.mjcf_text;
  const size_t begin = mjcf.find("<actuator>"), end = mjcf.find("</actuator>") + 11;
  std::ofstream(folder / "parts" / "actuator.xml")
      << "<mujoco>" << mjcf.substr(begin, end - begin) << "</mujoco>\n";
  mjcf.replace(begin, end - begin, "<include file=\"parts/actuator.xml\"/>");
  mjcf = Replaced(mjcf, "<option timestep", "<compiler meshdir=\"meshes\"/>\n  <option timestep");
  mjcf = Replaced(mjcf, "</asset>", "  <mesh name=\"tip\" file=\"tip.stl\"/>\n  </asset>");
  mjcf = Replaced(mjcf, "<geom name=\"bob\"",
                  "<geom name=\"tip\" type=\"mesh\" mesh=\"tip\" pos=\"0 0 0.5\" contype=\"0\" "
                  "conaffinity=\"0\"/>\n      <geom name=\"bob\"");
  std::ofstream(folder / "pendulum.xml") << mjcf;
  std::ofstream(folder / "task.toml") << pendulum.toml_text;
  return folder;
}

TEST(TaskAssetsTest, AFoldersIncludesAndMeshesLoadBesideItsMjcf) {
  const std::unique_ptr<Env> meshed = MakeEnv(task::LoadTaskSpec(PendulumWithAssets().string()));
  const std::unique_ptr<Env> plain = MakeEnv("pendulum_swingup");
  ASSERT_EQ(meshed->action_spec().size(), 1);
  EXPECT_EQ(meshed->Reset(7), plain->Reset(7));
  for (int step = 0; step < 20; ++step) {
    const Eigen::VectorXd action = Eigen::VectorXd::Constant(1, step % 3 - 1.0);
    EXPECT_EQ(meshed->Step(action).observation, plain->Step(action).observation) << step;
  }
}

TEST(TaskAssetsTest, ACarriedMjcfWithoutItsFilesAsksForTheFolder) {
  const task::TaskSpec folder = task::LoadTaskSpec(PendulumWithAssets().string());
  const task::TaskSpec carried =
      task::ParseTaskSpec(folder.toml_text, folder.mjcf_text, "model.pt");
  try {
    MakeEnv(carried);
    FAIL() << "a carried MJCF with an <include> was accepted";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("model.pt: mjcf: cannot load the MuJoCo model"), std::string::npos)
        << message;
    EXPECT_NE(message.find("give the task's folder, --task DIR"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dfmpc::envs
