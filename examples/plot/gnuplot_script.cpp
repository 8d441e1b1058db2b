#include "plot/gnuplot_script.h"

#include <algorithm>
#include <locale>
#include <sstream>

#include "plot/gnuplot_text.h"

namespace dfmpc::plot {
namespace {

std::string BlockName(std::size_t panel, std::size_t series) {
  return "$p" + std::to_string(panel) + "s" + std::to_string(series);
}

// Right margin, in characters, wide enough for the longest legend entry; the
// same for every panel so that stacked axes line up.
std::size_t LegendMargin(const std::vector<Panel>& panels) {
  std::size_t longest = 0;
  for (const Panel& panel : panels) {
    for (const Series& series : panel.series) longest = std::max(longest, series.label.size());
  }
  constexpr std::size_t kSampleAndPadding = 10;
  return longest == 0 ? 3 : longest + kSampleAndPadding;
}

void WriteDataBlocks(const std::vector<Panel>& panels, std::ostream& out) {
  for (std::size_t p = 0; p < panels.size(); ++p) {
    for (std::size_t s = 0; s < panels[p].series.size(); ++s) {
      const Series& series = panels[p].series[s];
      out << BlockName(p, s) << " << EOD\n";
      for (std::size_t i = 0; i < series.x.size(); ++i) {
        out << series.x[i] << ' ' << series.y[i] << '\n';
      }
      out << "EOD\n";
    }
  }
}

void WritePanel(const Panel& panel, std::size_t index, std::size_t count, std::ostream& out) {
  const double height = 1.0 / static_cast<double>(count);
  out << "set origin 0," << height * static_cast<double>(count - 1 - index) << '\n'
      << "set size 1," << height << '\n'
      << "set title " << QuoteGnuplot(panel.title) << '\n'
      << "set xlabel " << QuoteGnuplot(panel.x_label) << '\n'
      << "set ylabel " << QuoteGnuplot(panel.y_label)
      << '\n'
      // A log axis rounds out to whole decades, so that even data spanning
      // less than one shows labelled tics; a linear one hugs the data with
      // 5% headroom above and below.
      << (panel.log_y ? "set logscale y\nset autoscale y\nset offsets 0, 0, 0, 0\n"
                      : "unset logscale y\nset autoscale yfix\n"
                        "set offsets 0, 0, graph 0.05, graph 0.05\n")
      << "plot ";
  for (std::size_t s = 0; s < panel.series.size(); ++s) {
    const Series& series = panel.series[s];
    out << (s ? ", " : "") << BlockName(index, s) << " using 1:2 with "
        << (series.x.size() == 1 ? "points pt 7 ps 1.2"
            : series.mark_points ? "linespoints lw 2 pt 7 ps 0.8"
                                 : "lines lw 2")
        << " lc rgb " << QuotedColor(SeriesColor(s)) << ' '
        << (series.label.empty() ? "notitle" : "title " + QuoteGnuplot(series.label));
  }
  out << '\n';
}

}  // namespace

std::string GnuplotScript(const std::vector<Panel>& panels, int width, int panel_height,
                          const std::string& png_path) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out.precision(17);
  out << PngPreamble(width, panel_height * static_cast<int>(panels.size()), png_path);
  WriteDataBlocks(panels, out);
  out << "set multiplot\n"
      << "set lmargin 12\n"
      << "set rmargin " << LegendMargin(panels) << '\n'
      << "set format y '%g'\n"
      << "set grid back lt 1 lc rgb '#dddddd' lw 1 dt 1\n"
      << "set key outside right top Left reverse samplen 3\n"
      << "set autoscale xfix\n";
  for (std::size_t p = 0; p < panels.size(); ++p) WritePanel(panels[p], p, panels.size(), out);
  out << "unset multiplot\n"
      << "set output\n";
  return out.str();
}

}  // namespace dfmpc::plot
