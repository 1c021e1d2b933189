# The test install.consumer (tests/consumer/check.sh): cmake --install into
# a temporary prefix, then a program outside the tree built against it with
# find_package and with pkg-config, started: its server answers its client.
# It builds with the sanitizers the tree was built with, so it runs in every
# build. About a minute on 2 cores. install.python checks the installed
# Python package and rapidrpcd --python.
function(rapidrpc_consumer_test)
  set(flags "")
  if(RAPIDRPC_SANITIZE)
    set(flags "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined")
  elseif(RAPIDRPC_TSAN)
    set(flags "-fsanitize=thread -fno-omit-frame-pointer -DBOOST_ASIO_DISABLE_FENCED_BLOCK")
  endif()
  add_test(NAME install.consumer
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/consumer/check.sh ${PROJECT_BINARY_DIR}
      ${PROJECT_BINARY_DIR}/consumer-check ${CMAKE_CXX_COMPILER} ${CMAKE_GENERATOR} "${flags}")
  set_tests_properties(install.consumer PROPERTIES LABELS "install;integration" TIMEOUT 300)
  # The Python package, installed (tests/consumer/python_check.py).
  if(TARGET rapidrpcd)
    add_test(NAME install.python
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/consumer/python_check.py
        ${PROJECT_BINARY_DIR} ${PROJECT_BINARY_DIR}/python-check)
    set_tests_properties(install.python PROPERTIES LABELS "install;integration" TIMEOUT 120)
  endif()
endfunction()
rapidrpc_consumer_test()
