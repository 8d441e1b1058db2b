"""The closing comparison of `dfmpc tune`: defaults, the task file and the tuned table."""

import csv
import os

COLUMNS = ("setting", "seeds", "perturbation", "episodes", "return_mean", "return_std", "success",
           "mean_abs_da", "p50_ms", "p99_ms")
# Digits written per measured column: what the measurement resolves.
DIGITS = {"return_mean": 1, "return_std": 1, "success": 2, "mean_abs_da": 4, "p50_ms": 2,
          "p99_ms": 2}


def rows_table(rows):
    """The rows (dicts of COLUMNS) as an aligned text table; the perturbation
    column where a row has one."""
    perturbed = any(row.get("perturbation") for row in rows)
    header = ("setting", "seeds") + (("perturbation",) if perturbed else ()) + (
        "return", "success", "|Δa|", "p50 ms", "p99 ms")
    body = []
    for row in rows:
        success = "-" if row["success"] != row["success"] else f"{100 * row['success']:.0f}%"
        body.append((row["setting"], row["seeds"])
                    + ((row.get("perturbation") or "none",) if perturbed else ())
                    + (f"{row['return_mean']:.1f} ± {row['return_std']:.1f}", success,
                       f"{row['mean_abs_da']:.3f}", f"{row['p50_ms']:.2f}",
                       f"{row['p99_ms']:.2f}"))
    widths = [max(len(str(line[i])) for line in [header] + body) for i in range(len(header))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(line, widths)).rstrip()
             for line in [header] + body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_csv(path, rows):
    """Writes the rows whole (a temporary file renamed over `path`)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    temporary = path + ".tmp"
    with open(temporary, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if v != v else f"{v:.{DIGITS[k]}f}" if k in DIGITS else v)
                             for k, v in row.items()})
    os.replace(temporary, path)
