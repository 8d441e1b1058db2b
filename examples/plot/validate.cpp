#include "plot/validate.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dfmpc::plot {
namespace {

void CheckText(const std::string& text, const std::string& where) {
  for (const char c : text) {
    const auto code = static_cast<unsigned char>(c);
    if (code < 0x20 || code == 0x7f) {
      throw std::invalid_argument(where + ": control character in text");
    }
  }
}

void CheckSeries(const Series& series, bool log_y, const std::string& where) {
  CheckText(series.label, where + " label");
  if (series.x.empty()) throw std::invalid_argument(where + ": no points");
  if (series.x.size() != series.y.size()) {
    throw std::invalid_argument(where + ": " + std::to_string(series.x.size()) + " x values but " +
                                std::to_string(series.y.size()) + " y values");
  }
  for (std::size_t i = 0; i < series.x.size(); ++i) {
    const std::string point = where + " point " + std::to_string(i);
    if (!std::isfinite(series.x[i]) || !std::isfinite(series.y[i])) {
      throw std::invalid_argument(point + ": non-finite coordinate");
    }
    if (log_y && series.y[i] <= 0.0) {
      throw std::invalid_argument(point + ": y must be positive on a log_y panel");
    }
  }
}

}  // namespace

void ValidatePlot(const std::vector<Panel>& panels, int width, int panel_height) {
  if (width < kMinWidth || width > kMaxPixels || panel_height < kMinPanelHeight ||
      static_cast<long long>(panel_height) * static_cast<long long>(panels.size()) > kMaxPixels) {
    throw std::invalid_argument("plot size " + std::to_string(width) + "x" +
                                std::to_string(panel_height) + " per panel is out of range");
  }
  if (panels.empty()) throw std::invalid_argument("plot has no panels");
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const Panel& panel = panels[p];
    const std::string where = "panel " + std::to_string(p);
    CheckText(panel.title, where + " title");
    CheckText(panel.x_label, where + " x_label");
    CheckText(panel.y_label, where + " y_label");
    if (panel.series.empty()) throw std::invalid_argument(where + ": no series");
    for (std::size_t s = 0; s < panel.series.size(); ++s) {
      CheckSeries(panel.series[s], panel.log_y, where + " series " + std::to_string(s));
    }
  }
}

}  // namespace dfmpc::plot
