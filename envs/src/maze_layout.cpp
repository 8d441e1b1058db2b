#include "maze_layout.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace dfmpc::envs {

MazeLayout::MazeLayout(std::vector<std::string> rows, double cell_size)
    : rows_(std::move(rows)), cell_size_(cell_size) {
  if (rows_.empty() || rows_[0].empty()) throw std::invalid_argument("empty maze layout");
  for (const std::string& row : rows_) {
    if (row.size() != rows_[0].size()) throw std::invalid_argument("ragged maze layout");
  }
}

Eigen::Vector2d MazeLayout::CellCenter(int row, int col) const {
  return Eigen::Vector2d((col - (num_cols() - 1) / 2.0) * cell_size_,
                         ((num_rows() - 1) / 2.0 - row) * cell_size_);
}

Eigen::Vector2d MazeLayout::Find(char mark) const {
  for (int r = 0; r < num_rows(); ++r) {
    for (int c = 0; c < num_cols(); ++c) {
      if (rows_[r][c] == mark) return CellCenter(r, c);
    }
  }
  throw std::invalid_argument(std::string("maze layout has no '") + mark + "'");
}

double MazeLayout::WallDistance(const Eigen::Vector2d& point) const {
  double nearest = std::numeric_limits<double>::infinity();
  const double half = cell_size_ / 2.0;
  for (int r = 0; r < num_rows(); ++r) {
    for (int c = 0; c < num_cols(); ++c) {
      if (!IsWall(r, c)) continue;
      const Eigen::Vector2d offset = (point - CellCenter(r, c)).cwiseAbs().array() - half;
      nearest = std::min(nearest, offset.cwiseMax(0.0).norm());
    }
  }
  return nearest;
}

DistanceField::DistanceField(const MazeLayout& layout, const Eigen::Vector2d& goal,
                             double clearance, double resolution)
    : resolution_(resolution) {
  const double width = layout.num_cols() * layout.cell_size();
  const double height = layout.num_rows() * layout.cell_size();
  origin_ = Eigen::Vector2d(-width / 2.0, -height / 2.0);
  nx_ = static_cast<int>(std::ceil(width / resolution)) + 1;
  ny_ = static_cast<int>(std::ceil(height / resolution)) + 1;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<bool> free(static_cast<std::size_t>(nx_) * ny_);
  for (int iy = 0; iy < ny_; ++iy) {
    for (int ix = 0; ix < nx_; ++ix) {
      const Eigen::Vector2d point = origin_ + resolution * Eigen::Vector2d(ix, iy);
      free[Index(ix, iy)] = layout.WallDistance(point) >= clearance;
    }
  }
  distance_.assign(free.size(), inf);
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  const Eigen::Vector2d g = (goal - origin_) / resolution;
  const int start = Index(static_cast<int>(std::lround(g.x())), static_cast<int>(std::lround(g.y())));
  distance_[start] = 0.0;
  queue.emplace(0.0, start);
  while (!queue.empty()) {
    const auto [d, index] = queue.top();
    queue.pop();
    if (d > distance_[index]) continue;
    const int ix = index % nx_;
    const int iy = index / nx_;
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int jx = ix + dx;
        const int jy = iy + dy;
        if ((dx == 0 && dy == 0) || jx < 0 || jy < 0 || jx >= nx_ || jy >= ny_) continue;
        const int next = Index(jx, jy);
        if (!free[next]) continue;
        const double candidate = d + resolution * std::hypot(dx, dy);
        if (candidate < distance_[next]) {
          distance_[next] = candidate;
          queue.emplace(candidate, next);
        }
      }
    }
  }
}

double DistanceField::Distance(const Eigen::Vector2d& point) const {
  const Eigen::Vector2d p = (point - origin_) / resolution_;
  const int x0 = std::clamp(static_cast<int>(std::floor(p.x())), 0, nx_ - 2);
  const int y0 = std::clamp(static_cast<int>(std::floor(p.y())), 0, ny_ - 2);
  double best = std::numeric_limits<double>::infinity();
  for (int ix = x0; ix <= x0 + 1; ++ix) {
    for (int iy = y0; iy <= y0 + 1; ++iy) {
      const Eigen::Vector2d node = origin_ + resolution_ * Eigen::Vector2d(ix, iy);
      best = std::min(best, distance_[Index(ix, iy)] + (point - node).norm());
    }
  }
  return best;
}

}  // namespace dfmpc::envs
