#!/usr/bin/env bash
# Reproduces the shipped video world models from nothing: collects episodes
# with 64x64 frames, trains the frame tokenizer, the diffusion-forcing
# transformer over its latents (one file, TASK_video.pt) and the latent MLP
# baseline (TASK_video_mlp.pt), then measures open-loop prediction on
# held-out episodes. Outputs go to $DFMPC_MODELS_DIR (default:
# out/video_models); copy TASK_video.pt to examples/models/ to ship it.
# Usage: scripts/train_video_models.sh [TASK ...]
#   (default: pendulum_swingup cartpole_swingup)
# DFMPC_EPISODES, DFMPC_FRAME_STEPS and DFMPC_STEPS shrink a trial run
# (defaults: 30 episodes; 3000 tokenizer steps for the pendulum, 5000 for
# the cart-pole; 4000 transformer steps). DFMPC_REUSE_DATA=1 keeps a
# dataset collected by an earlier run (the same seed collects the same
# episodes).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DFMPC_BUILD_DIR:-$root/build}
out=${DFMPC_MODELS_DIR:-$root/out/video_models}
dfmpc="$build_dir/examples/dfmpc"

bash "$root/scripts/build.sh"
mkdir -p "$out"
episodes=${DFMPC_EPISODES:-30}
steps=${DFMPC_STEPS:-4000}
tasks=("$@")
[ ${#tasks[@]} -gt 0 ] || tasks=(pendulum_swingup cartpole_swingup)

for task in "${tasks[@]}"; do
  start=$(date +%s)
  # The state models' control rates (train_default_models.sh says why).
  # The cart-pole's pole is thinner and sweeps around a moving cart: after
  # 3000 steps at weight 20 its tokenizer still drew a blur where the pole
  # could be (held-out PSNR 30.02 dB, the mean frame 29.26 dB).
  case "$task" in
    cartpole_*) action_repeat=4 frame_steps=5000 foreground_weight=50 ;;
    *) action_repeat=1 frame_steps=3000 foreground_weight=20 ;;
  esac
  frame_steps=${DFMPC_FRAME_STEPS:-$frame_steps}
  if [ "${DFMPC_REUSE_DATA:-0}" = 1 ] && [ -s "$out/${task}_frames.h5" ]; then
    echo "== $task: reusing $out/${task}_frames.h5"
  else
    echo "== $task: collecting $episodes mixed-policy episodes with 64x64 frames"
    "$dfmpc" collect --task "$task" --policy mixed --episodes "$episodes" --seed 1 \
      --action-repeat "$action_repeat" --episode-physics-steps $((1000 * action_repeat)) \
      --frames 64x64 --threads "$(nproc)" --out "$out/${task}_frames.h5"
  fi
  echo "== $task: training the frame tokenizer"
  "$dfmpc" train-frames --data "$out/${task}_frames.h5" --out "$out/${task}_tokenizer.pt" \
    --latent 8 --channels 16 --steps "$frame_steps" --foreground-weight "$foreground_weight" \
    --batch 64 --seed 0 --threads 1
  echo "== $task: training the diffusion-forcing transformer over the latents"
  "$dfmpc" train --data "$out/${task}_frames.h5" --tokenizer "$out/${task}_tokenizer.pt" \
    --out "$out/${task}_video.pt" --known-actions --steps "$steps" --batch 32 --window 32 \
    --width 96 --depth 4 --heads 4 --prediction v --seed 0 --threads 1
  echo "== $task: training the latent MLP baseline"
  "$dfmpc" train-mlp --data "$out/${task}_frames.h5" --tokenizer "$out/${task}_tokenizer.pt" \
    --out "$out/${task}_video_mlp.pt" --steps $((steps / 2)) --seed 0
  echo "== $task: built in $(( $(date +%s) - start )) s"
  # Held-out episodes: collect seeded the data's episodes 1000003 + i.
  echo "== $task: open-loop prediction on 10 held-out episodes"
  "$dfmpc" rollout --task "$task" --model "$out/${task}_video.pt" --mlp "$out/${task}_video_mlp.pt" \
    --episodes 10 --seed 100 --context 16 --horizon 256 --out "$out/${task}_rollout"
  echo "== $task: 1000-frame rollouts against the data manifold"
  "$dfmpc" rollout --task "$task" --model "$out/${task}_video.pt" --episodes 3 --seed 200 \
    --context 16 --horizon 1000 --manifold-data "$out/${task}_frames.h5" \
    --out "$out/${task}_long_rollout"
  echo "== $task: rollout speed, no cache against the exact cache"
  "$dfmpc" bench rollout --task "$task" --model "$out/${task}_video.pt" \
    --csv "$out/${task}_bench_rollout.csv"
done
