# dfmpc_add_gtest_suites(<target> [SPLIT <regex>] [PROPERTIES ...]): one
# CTest test per GoogleTest suite of <target>, found after every build of it.
#
# gtest_discover_tests registers every test case as a process of its own,
# and a process that links LibTorch spends about 0.35 s starting before it
# runs anything: most of the Release pass's time went there. A suite's cases
# share one process instead. Failures still name the case (GoogleTest prints
# "[  FAILED  ] Suite.Case" in the output ctest shows), `ctest -R` selects
# suites by name, and the binary's --gtest_filter runs single cases (see
# scripts/test.sh).
#
# SPLIT <regex>: suites whose name matches get a test per case instead, for
# suites of a few long cases (closed-loop episodes) that would otherwise
# hold one core while the other runs out of work.
function(dfmpc_add_gtest_suites target)
  cmake_parse_arguments(ARG "" "SPLIT" "PROPERTIES" ${ARGN})
  set(list_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND}
            -DEXECUTABLE=$<TARGET_FILE:${target}>
            -DOUTPUT=${list_file}
            "-DPROPERTIES=${ARG_PROPERTIES}"
            "-DSPLIT=${ARG_SPLIT}"
            -P ${PROJECT_SOURCE_DIR}/cmake/list_gtest_suites.cmake
    BYPRODUCTS ${list_file}
    VERBATIM)
  # A binary not built yet shows as one failing test, as with
  # gtest_discover_tests.
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  file(WRITE ${include_file}
    "if(EXISTS \"${list_file}\")\n"
    "  include(\"${list_file}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
