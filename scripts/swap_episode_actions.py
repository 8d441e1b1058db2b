#!/usr/bin/env python3
"""Writes a copy of a dataset in which every episode carries the actions of
the next one (the last episode the first's), its observations and rewards
unchanged: an ablation for `dfmpc eval-model`, which predicts each held-out
window's observations from its known actions. A model whose open-loop error
barely rises on the copy predicts from the observations alone and ignores
the actions it is told.

    PYTHONPATH=build/python python3 scripts/swap_episode_actions.py data.h5 swapped.h5
    dfmpc eval-model --model model.pt --data swapped.h5 --csv swapped_error.csv
"""

import argparse

import dfmpc
from dataset_copy import episode_observations, write_copy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("data", help="dataset to copy")
    parser.add_argument("out", help="where to write the copy with swapped actions")
    args = parser.parse_args()
    try:
        data = dfmpc.read_dataset(args.data, frames=False)
    except RuntimeError as error:
        parser.error(str(error))
    info = data["info"]
    if info["frame_width"] > 0:
        parser.error(f"{args.data} holds frames; this ablation is for state datasets")
    starts, lengths = data["episode_starts"], data["episode_lengths"]
    if len(starts) < 2:
        parser.error(f"{args.data} has one episode; swapping needs two or more")

    episodes = []
    for i, (start, length) in enumerate(zip(starts, lengths)):
        donor = (i + 1) % len(starts)
        steps = min(length, lengths[donor])  # the shorter of the two episodes
        episodes.append({
            "observations": episode_observations(data, start, steps),
            "actions": data["actions"][starts[donor]:starts[donor] + steps],
            "rewards": data["rewards"][start:start + steps],
        })
    write_copy(parser, args.out, episodes, info, "swapped actions")


if __name__ == "__main__":
    main()
