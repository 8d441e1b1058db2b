#!/usr/bin/env bash
# The Python module as installed: `cmake --install` into a fresh prefix,
# then Debian's python3 imports it from the prefix alone (no build tree on
# any path) and plans a step. Arguments: BUILD_DIR SOURCE_DIR WORK_DIR.
set -euo pipefail
build_dir=$1
source_dir=$2
work_dir=$3
rm -rf "$work_dir"
mkdir -p "$work_dir"
cmake --install "$build_dir" --prefix "$work_dir/prefix" > "$work_dir/install.log" 2>&1 ||
  { cat "$work_dir/install.log"; exit 1; }
site=$(find "$work_dir/prefix" -path "*/dfmpc/__init__.py" -printf '%h\n' | head -1)
[ -n "$site" ] || { echo "no dfmpc package under $work_dir/prefix"; exit 1; }
cd "$work_dir"
env -i PATH=/usr/bin:/bin PYTHONPATH="$(dirname "$site")" OMP_NUM_THREADS=1 \
  /usr/bin/python3 - "$source_dir/examples/models/pendulum_swingup.pt" "$work_dir/prefix" <<'PY'
import sys
import dfmpc
assert dfmpc.__file__.startswith(sys.argv[2]), dfmpc.__file__
env = dfmpc.make_env("pendulum_swingup")
observation, _ = env.reset(seed=0)
planner = dfmpc.Planner.from_file(sys.argv[1], candidates=2)
planner.reset(observation)
action = planner.act(observation)
assert action.shape == (1,) and abs(action[0]) <= 1.0
from dfmpc.tuning import space  # the tuner's package, installed beside the module
assert "horizon" in space.default_space(dfmpc.model_info(sys.argv[1]))
print("python install: ok")
PY
