"""`dfmpc tune`: a task's planner options, found by Optuna on held-out episodes.

study.py runs the search (parallel worker processes sharing an Optuna
journal), space.py says what varies, episodes.py scores one setting,
table.py writes the task file's [planner] table and report.py the closing
comparison. `python3 -m dfmpc.tuning --help` (or `dfmpc tune --help`) lists
the options; dfmpc.tune(...) is the same from Python.
"""
