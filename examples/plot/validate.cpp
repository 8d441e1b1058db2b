#include "plot/validate.h"

#include <cmath>
#include <optional>
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

void CheckBars(const BarSeries& series, std::size_t categories, const std::string& where) {
  CheckText(series.label, where + " label");
  if (series.bars.size() != categories) {
    throw std::invalid_argument(where + ": " + std::to_string(series.bars.size()) + " bars for " +
                                std::to_string(categories) + " categories");
  }
  bool any = false;
  for (std::size_t c = 0; c < series.bars.size(); ++c) {
    const std::optional<Bar>& bar = series.bars[c];
    if (!bar) continue;
    any = true;
    const std::string at = where + " bar " + std::to_string(c);
    if (!std::isfinite(bar->value) || !std::isfinite(bar->error)) {
      throw std::invalid_argument(at + ": non-finite value or error");
    }
    if (bar->error < 0.0) throw std::invalid_argument(at + ": negative error");
  }
  if (!any) throw std::invalid_argument(where + ": no bars");
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

void ValidateBarChart(const BarChart& chart, int width, int height) {
  if (width < kMinWidth || width > kMaxPixels || height < kMinPanelHeight || height > kMaxPixels) {
    throw std::invalid_argument("bar chart size " + std::to_string(width) + "x" +
                                std::to_string(height) + " is out of range");
  }
  CheckText(chart.title, "bar chart title");
  CheckText(chart.y_label, "bar chart y_label");
  if (!std::isfinite(chart.y_min) || !std::isfinite(chart.y_max) || chart.y_min >= chart.y_max) {
    throw std::invalid_argument("bar chart y range is not a finite, non-empty interval");
  }
  if (chart.categories.empty()) throw std::invalid_argument("bar chart has no categories");
  for (std::size_t c = 0; c < chart.categories.size(); ++c) {
    CheckText(chart.categories[c], "category " + std::to_string(c));
  }
  if (chart.series.empty()) throw std::invalid_argument("bar chart has no series");
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    CheckBars(chart.series[s], chart.categories.size(), "series " + std::to_string(s));
  }
}

}  // namespace dfmpc::plot
