# Registers a GoogleTest executable's tests one ctest test per suite
# (<name>.<Suite>, run with --gtest_filter=<Suite>.*), where
# gtest_discover_tests registers one per test. Run after each link
# (rapidrpc_gtest in CMakeLists.txt, sanitizer builds):
#   cmake -D BINARY=<executable> -D NAME=<name> -D OUTPUT=<file> -P gtest_suites.cmake
# OUTPUT gets the add_test() calls and sets <name>_TESTS to the tests'
# names, as gtest_discover_tests' TEST_LIST does.
foreach(var BINARY NAME OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "gtest_suites.cmake: ${var} is not set")
  endif()
endforeach()

execute_process(COMMAND "${BINARY}" --gtest_list_tests
  OUTPUT_VARIABLE listing RESULT_VARIABLE result TIMEOUT 30)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${BINARY} --gtest_list_tests failed (${result}):\n${listing}")
endif()

# A suite's line starts in the first column and ends its name with a dot
# (then, for a typed suite, "  # TypeParam = ..."); its tests' lines are
# indented. Brackets and semicolons, which a CMake list would split on,
# cannot be in a suite's name.
string(REPLACE "\n" ";" lines "${listing}")
set(tests "")
set(script "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #]+)\\.( |$)")
    set(suite "${CMAKE_MATCH_1}")
    set(test "${NAME}.${suite}")
    list(APPEND tests "${test}")
    string(APPEND script
      "add_test([=[${test}]=] [==[${BINARY}]==] [==[--gtest_filter=${suite}.*]==])\n")
  endif()
endforeach()
if(tests STREQUAL "")
  message(FATAL_ERROR "${BINARY} lists no test suite:\n${listing}")
endif()
string(APPEND script "set(${NAME}_TESTS [==[${tests}]==])\n")
file(WRITE "${OUTPUT}" "${script}")
