// A maze drawn as text ('#' wall, 'S' start, 'G' goal, '.' free), its walls
// and the shortest-path distance to the goal around them.
#ifndef DFMPC_ENVS_SRC_MAZE_LAYOUT_H_
#define DFMPC_ENVS_SRC_MAZE_LAYOUT_H_

#include <Eigen/Core>

#include <string>
#include <vector>

namespace dfmpc::envs {

class MazeLayout {
 public:
  // Row 0 is the top (largest y); the maze is centred on the origin.
  MazeLayout(std::vector<std::string> rows, double cell_size);

  int num_rows() const { return static_cast<int>(rows_.size()); }
  int num_cols() const { return static_cast<int>(rows_[0].size()); }
  double cell_size() const { return cell_size_; }
  bool IsWall(int row, int col) const { return rows_[row][col] == '#'; }
  Eigen::Vector2d CellCenter(int row, int col) const;
  // Centre of the (first) cell marked `mark`; throws if there is none.
  Eigen::Vector2d Find(char mark) const;
  // Distance from `point` to the nearest wall cell.
  double WallDistance(const Eigen::Vector2d& point) const;

 private:
  std::vector<std::string> rows_;
  double cell_size_;
};

// Shortest-path distance to a goal on a grid over the maze (8-connected,
// Dijkstra), for points whose distance to the walls is at least `clearance`.
class DistanceField {
 public:
  DistanceField(const MazeLayout& layout, const Eigen::Vector2d& goal, double clearance,
                double resolution);
  double Distance(const Eigen::Vector2d& point) const;

 private:
  int Index(int ix, int iy) const { return iy * nx_ + ix; }

  Eigen::Vector2d origin_;
  double resolution_;
  int nx_;
  int ny_;
  std::vector<double> distance_;  // infinity where blocked
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_MAZE_LAYOUT_H_
