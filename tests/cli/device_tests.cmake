# --device and data-parallel training as a user meets them (included by
# tests/cli/CMakeLists.txt; ${dfmpc} and ${eval_dir} are its).

# Without CUDA (CI), asking for it is a clear error, before any work.
foreach(command_case
    "train;train;--data;${eval_dir}/pendulum.h5;--out;${eval_dir}/cuda.pt;--steps;1"
    "control;control;--task;pendulum_swingup;--steps;1;--out;${eval_dir}/cuda_control"
    "rollout;rollout;--task;pendulum_swingup;--horizon;8")
  list(POP_FRONT command_case name)
  dfmpc_cli_test(cli_${name}_device_without_cuda 1
    "dfmpc: error: [^\n]*(device 'cuda' requested, but this LibTorch build or machine has no CUDA|model is on)"
    ${dfmpc} ${command_case} --device cuda)
endforeach()
set_tests_properties(cli_train_device_without_cuda PROPERTIES FIXTURES_REQUIRED eval_model_data)
dfmpc_cli_test(cli_train_rejects_unknown_device 1 "dfmpc: error: unknown device 'gpu'"
  ${dfmpc} train --data ${eval_dir}/pendulum.h5 --out ${eval_dir}/gpu.pt --device gpu)
set_tests_properties(cli_train_rejects_unknown_device PROPERTIES FIXTURES_REQUIRED eval_model_data)

# Two processes on one global batch of 8 windows (scripts/train_parallel.sh)
# end with the validation loss of one process on the same batch, up to the
# order of float sums (the last loss row, 6 decimals).
dfmpc_cli_test(cli_train_two_processes_equal_one 0 "same validation loss"
  ${CMAKE_CURRENT_SOURCE_DIR}/train_two_processes.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}
  ${eval_dir} ${eval_dir}/pendulum.h5)
set_tests_properties(cli_train_two_processes_equal_one PROPERTIES FIXTURES_REQUIRED eval_model_data)

# A rank whose partners never come fails within --dist-timeout, not a hang.
dfmpc_cli_test(cli_train_missing_rank_is_an_error 1 "dfmpc: error: .*did not meet"
  ${dfmpc} train --data ${eval_dir}/pendulum.h5 --out ${eval_dir}/lonely.pt --steps 1
           --world-size 2 --rank 1 --store 127.0.0.1:1 --dist-timeout 2)
set_tests_properties(cli_train_missing_rank_is_an_error PROPERTIES
  FIXTURES_REQUIRED eval_model_data TIMEOUT 60)
dfmpc_cli_test(cli_train_rejects_rank_outside_the_world 1
  "dfmpc: error: .*rank 2 is not in \\[0, world size 2\\)"
  ${dfmpc} train --data ${eval_dir}/pendulum.h5 --out ${eval_dir}/rank.pt --world-size 2
           --rank 2)
set_tests_properties(cli_train_rejects_rank_outside_the_world PROPERTIES
  FIXTURES_REQUIRED eval_model_data)
