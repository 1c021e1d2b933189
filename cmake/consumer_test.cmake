# The test install.consumer (tests/consumer/check.sh): cmake --install into
# a temporary prefix, then a program outside the tree built against it with
# find_package and with pkg-config, started: its server answers its client.
# Not in a sanitizer build: what it checks, the installed headers, CMake
# package and .pc file, is the same in every build, and building its two
# programs with the sanitizers took a minute of CPU that the sanitized suite,
# bound by the CPU, waited for; the sanitizers run the code the programs
# call in every other test. install.python checks the installed Python
# package and rapidrpcd --python.
function(rapidrpc_consumer_test)
  if(NOT (RAPIDRPC_SANITIZE OR RAPIDRPC_TSAN))
    add_test(NAME install.consumer
      COMMAND bash ${PROJECT_SOURCE_DIR}/tests/consumer/check.sh ${PROJECT_BINARY_DIR}
        ${PROJECT_BINARY_DIR}/consumer-check ${CMAKE_CXX_COMPILER} ${CMAKE_GENERATOR})
    set_tests_properties(install.consumer PROPERTIES LABELS "install;integration" TIMEOUT 300)
  endif()
  # The Python package, installed (tests/consumer/python_check.py).
  if(TARGET rapidrpcd)
    add_test(NAME install.python
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/consumer/python_check.py
        ${PROJECT_BINARY_DIR} ${PROJECT_BINARY_DIR}/python-check)
    set_tests_properties(install.python PROPERTIES LABELS "install;integration" TIMEOUT 120)
  endif()
endfunction()
rapidrpc_consumer_test()
