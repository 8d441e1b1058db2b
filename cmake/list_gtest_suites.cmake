# Writes OUTPUT, a CTest script with one test per GoogleTest suite of
# EXECUTABLE (its cases selected by --gtest_filter=Suite.*), or per case for
# the suites the regex SPLIT matches, each with the test properties
# PROPERTIES. Run after every build of the executable
# (cmake/DfmpcGTestSuites.cmake).
foreach(variable EXECUTABLE OUTPUT)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "list_gtest_suites.cmake: ${variable} is not set")
  endif()
endforeach()

execute_process(COMMAND "${EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status
                TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${status}):\n${errors}")
endif()

# A test named `name` running the cases that `filter` selects.
macro(add_gtest name filter)
  string(APPEND script
    "add_test([==[${name}]==] [==[${EXECUTABLE}]==] [==[--gtest_filter=${filter}]==])\n")
  if(PROPERTIES)
    string(APPEND script "set_tests_properties([==[${name}]==] PROPERTIES ${PROPERTIES})\n")
  endif()
endmacro()

# Suite lines start in column 0 and end with '.' (typed suites add a
# comment); their cases follow, indented by two spaces. Suites that SPLIT
# matches get a test per case.
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
set(split_suite "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.( |$)")
    set(suite "${CMAKE_MATCH_1}")
    set(split_suite "")
    if(SPLIT AND suite MATCHES "${SPLIT}")
      set(split_suite "${suite}")
    else()
      add_gtest("${suite}" "${suite}.*")
    endif()
  elseif(split_suite AND line MATCHES "^  ([^ ]+)")
    add_gtest("${split_suite}.${CMAKE_MATCH_1}" "${split_suite}.${CMAKE_MATCH_1}")
  endif()
endforeach()
file(WRITE "${OUTPUT}" "${script}")
