# Runs a command and checks both its exit status and its output, which
# PASS_REGULAR_EXPRESSION alone cannot do (it ignores the status).
#
#   cmake -DEXPECTED_EXIT=<status> -DEXPECTED_OUTPUT=<regex> -P check_command.cmake
#         -- <command> [arguments...]
#
# The regex (CMake syntax, as PASS_REGULAR_EXPRESSION's) must match somewhere
# in stdout and stderr together, in the order they were written.
if(NOT DEFINED EXPECTED_EXIT OR NOT DEFINED EXPECTED_OUTPUT)
  message(FATAL_ERROR "check_command.cmake: set EXPECTED_EXIT and EXPECTED_OUTPUT")
endif()

set(command)
set(after_separator FALSE)
math(EXPR last_argument "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last_argument})
  if(after_separator)
    # Escaped, a ";" inside an argument (sh -c "a; b") does not split it.
    string(REPLACE ";" "\\;" argument "${CMAKE_ARGV${i}}")
    list(APPEND command "${argument}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "check_command.cmake: no command after --")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
message("${output}")
if(NOT "${status}" STREQUAL "${EXPECTED_EXIT}")
  message(FATAL_ERROR "exit status ${status}, expected ${EXPECTED_EXIT}")
endif()
if(NOT output MATCHES "${EXPECTED_OUTPUT}")
  message(FATAL_ERROR "output does not match the regular expression\n${EXPECTED_OUTPUT}")
endif()
