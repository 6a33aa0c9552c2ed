# adaqp_gtest_suites(TARGET ENV...): one ctest entry per test suite of the gtest binary TARGET,
# named after the suite and run as `TARGET --gtest_filter=SUITE.*` with the environment ENV.
#
# Why suites and not test cases (gtest_discover_tests): a process per test case paid the start-up
# of the binary (libtorch's operator registry, a singleton MPI run) 632 times: 39 s against 17-19 s
# per suite, 3 at a time on the 2-core machine (benchmarks/results/ci-cost-2026-12-01). A suite keeps
# what a process per test gave: a crash or leaked state stays within its suite, ctest runs suites in
# parallel and `ctest -R SUITE` selects one.
#
# The suites are listed after each build of TARGET (--gtest_list_tests), as gtest_discover_tests
# lists its cases. An entry that skipped a test (GTEST_SKIP: a CUDA suite on a machine without a
# GPU) and failed none counts as skipped: TARGET's main prints the skip marker then, and only then
# (tests/support/gtest_main.cpp). The GPU tests have suites of their own, so that on CI, where only
# they may skip, no skip hides a pass.
set(ADAQP_GTEST_LIST_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/gtest_list_suites.cmake")

function(adaqp_gtest_suites target)
  set(suites_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  add_custom_command(
    TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" "-DBINARY=$<TARGET_FILE:${target}>" "-DOUT=${suites_file}" -P
            "${ADAQP_GTEST_LIST_SCRIPT}"
    BYPRODUCTS "${suites_file}"
    VERBATIM)
  set(env)
  foreach(entry IN LISTS ARGN)
    string(APPEND env " \"${entry}\"")
  endforeach()
  # Read by ctest: one add_test per suite of the last build's list, each with an Open MPI session
  # directory of its own (the layer tests' singleton MPI runs; tests/CMakeLists.txt says why).
  set(sessions "${PROJECT_BINARY_DIR}/mpi-sessions/${target}")
  file(GENERATE OUTPUT "${include_file}" CONTENT "if(EXISTS \"${suites_file}\")
  include(\"${suites_file}\")
  foreach(suite IN LISTS suites)
    file(MAKE_DIRECTORY \"${sessions}/\${suite}\")
    add_test(\"\${suite}\" \"${CMAKE_COMMAND}\" -E env${env}
             \"OMPI_MCA_orte_tmpdir_base=${sessions}/\${suite}\" \"$<TARGET_FILE:${target}>\"
             \"--gtest_filter=\${suite}.*\")
    set_tests_properties(\"\${suite}\" PROPERTIES TIMEOUT 600
                         SKIP_REGULAR_EXPRESSION ADAQP_SKIPPED_TESTS)
  endforeach()
else()
  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
