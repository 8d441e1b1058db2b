#include "plot/bar_chart_script.h"

#include <locale>
#include <sstream>

#include "plot/gnuplot_text.h"
#include "plot/plot.h"

namespace dfmpc::plot {
namespace {

// Each group spans this much of the unit distance between categories.
constexpr double kGroupWidth = 0.8;

std::string BlockName(std::size_t series) { return "$s" + std::to_string(series); }

// One data block per series: x, value, error, bar width; a missing bar has no row.
void WriteDataBlocks(const BarChart& chart, std::ostream& out) {
  const double width = kGroupWidth / static_cast<double>(chart.series.size());
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    const double offset = (static_cast<double>(s) + 0.5) * width - kGroupWidth / 2.0;
    out << BlockName(s) << " << EOD\n";
    for (std::size_t c = 0; c < chart.categories.size(); ++c) {
      const std::optional<Bar>& bar = chart.series[s].bars[c];
      if (!bar) continue;
      out << static_cast<double>(c) + offset << ' ' << bar->value << ' ' << bar->error << ' '
          << width << '\n';
    }
    out << "EOD\n";
  }
}

void WriteAxes(const BarChart& chart, std::ostream& out) {
  out << "set title " << QuoteGnuplot(chart.title) << '\n'
      << "set ylabel " << QuoteGnuplot(chart.y_label) << '\n'
      << "set yrange [" << chart.y_min << ':' << chart.y_max << "]\n"
      << "set xrange [-0.5:" << static_cast<double>(chart.categories.size()) - 0.5 << "]\n"
      << "set xtics scale 0 (";
  for (std::size_t c = 0; c < chart.categories.size(); ++c) {
    out << (c ? ", " : "") << QuoteGnuplot(chart.categories[c]) << ' ' << c;
  }
  out << ")\n"
      << "set format y '%g'\n"
      << "set grid ytics back lt 1 lc rgb '#dddddd' lw 1 dt 1\n"
      << "set key outside below center horizontal Left reverse samplen 2\n"
      << "set style fill solid 1.0 border lc rgb '#333333'\n"
      << "set lmargin 12\n";
}

}  // namespace

std::string BarChartScript(const BarChart& chart, int width, int height,
                           const std::string& png_path) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out.precision(17);
  out << PngPreamble(width, height, png_path);
  WriteDataBlocks(chart, out);
  WriteAxes(chart, out);
  out << "plot ";
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    const BarSeries& series = chart.series[s];
    out << (s ? ", " : "") << BlockName(s) << " using 1:2:3:4 with boxerrorbars "
        << (series.hatched ? "fs pattern 5 border lc rgb '#333333' " : "") << "lc rgb "
        << QuotedColor(SeriesColor(s)) << " title " << QuoteGnuplot(series.label);
  }
  out << "\nset output\n";
  return out.str();
}

}  // namespace dfmpc::plot
