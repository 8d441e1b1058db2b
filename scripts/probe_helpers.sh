# shellcheck shell=bash
# Shared by the outcome probes (probe_outcome_guidance.sh,
# probe_guided_data.sh); sourced, not run.

# At most one background job per core.
throttle() { while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done; }

# Runs a command with its output in a log; a failure stops the probe.
quiet() { local log=$1; shift; "$@" > "$log" 2>&1 || { echo "failed, see $log" >&2; exit 1; }; }

# The guidance weight of the best mean return among the rows of the eval
# summary $1 whose label starts with $2 (the label then ends in the weight).
picked_weight() {
  awk -F, -v prefix="$2" '
    NR == 1 { for (i = 1; i <= NF; i++) column[$i] = i; next }
    index($column["label"], prefix) == 1 && (best == "" || $column["return_mean"] > best) {
      best = $column["return_mean"]; pick = substr($column["label"], length(prefix) + 1) }
    END { print pick }' "$1"
}
