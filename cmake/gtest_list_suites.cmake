# cmake -DBINARY=<gtest binary> -DOUT=<file> -P gtest_list_suites.cmake: writes
# `set(suites "A;B;...")`, the binary's test suites (GTestSuites.cmake reads it in ctest). A binary
# that cannot list its tests fails the build, as gtest_discover_tests does.
execute_process(
  COMMAND "${BINARY}" --gtest_list_tests
  OUTPUT_VARIABLE listing
  ERROR_VARIABLE errors
  RESULT_VARIABLE status
  TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BINARY} --gtest_list_tests failed (${status}):\n${errors}${listing}")
endif()
# A suite's line is its name and a dot, at the start of the line (parameterised and typed suites
# add "  # TypeParam = ..."); its test cases follow indented.
string(REGEX MATCHALL "(^|\n)[A-Za-z_][A-Za-z0-9_/]*\\." lines "${listing}")
set(suites)
foreach(line IN LISTS lines)
  string(STRIP "${line}" line)
  string(REGEX REPLACE "\\.$" "" suite "${line}")
  list(APPEND suites "${suite}")
endforeach()
list(REMOVE_DUPLICATES suites)
if(NOT suites)
  message(FATAL_ERROR "${BINARY} lists no test suite:\n${listing}")
endif()
file(WRITE "${OUT}.tmp" "set(suites \"${suites}\")\n")
file(RENAME "${OUT}.tmp" "${OUT}")
