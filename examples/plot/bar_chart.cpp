#include "plot/bar_chart.h"

#include "plot/bar_chart_script.h"
#include "plot/render.h"
#include "plot/validate.h"

namespace dfmpc::plot {

void WriteBarChartPng(const std::string& path, const BarChart& chart, int width, int height) {
  ValidateBarChart(chart, width, height);
  RenderPng(path,
            [&](const std::string& png) { return BarChartScript(chart, width, height, png); });
}

}  // namespace dfmpc::plot
