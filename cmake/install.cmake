# cmake --install: the library and the demo library, the public headers, a
# CMake package config (find_package(rapidrpc CONFIG) gives
# rapidrpc::rapidrpc; COMPONENTS demo adds rapidrpc::demo) and pkg-config
# files (rapidrpc.pc, rapidrpc-demo.pc), all relocatable: the prefix is the
# one given to cmake --install --prefix. tests/consumer builds against them.
include(CMakePackageConfigHelpers)

# A function, so that its variables stay in it.
function(rapidrpc_install)
  set(rapidrpc_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/rapidrpc)
  set_target_properties(rapidrpc_demo PROPERTIES EXPORT_NAME demo)

  install(TARGETS rapidrpc EXPORT rapidrpc-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS rapidrpc_demo EXPORT rapidrpc-demo-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rapidrpc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.hpp")
  install(EXPORT rapidrpc-targets NAMESPACE rapidrpc:: DESTINATION ${rapidrpc_cmake_dir})
  install(EXPORT rapidrpc-demo-targets NAMESPACE rapidrpc:: DESTINATION ${rapidrpc_cmake_dir})

  # A static library's own dependencies go to the program's link: the config
  # finds them for the consumer, and rapidrpc.pc requires them outright (a
  # plain `pkg-config --libs` must link). A shared library carries them itself:
  # only what the public headers need (Boost, Threads) is found, and the .pc
  # lists them as private.
  get_target_property(rapidrpc_type rapidrpc TYPE)
  if(rapidrpc_type STREQUAL "STATIC_LIBRARY")
    set(RAPIDRPC_STATIC TRUE)
    set(rapidrpc_pc_requires "Requires")
  else()
    set(RAPIDRPC_STATIC FALSE)
    set(rapidrpc_pc_requires "Requires.private")
  endif()

  configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/rapidrpcConfig.cmake.in
    ${PROJECT_BINARY_DIR}/package/rapidrpcConfig.cmake
    INSTALL_DESTINATION ${rapidrpc_cmake_dir})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/rapidrpcConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/package/rapidrpcConfig.cmake ${PROJECT_BINARY_DIR}/package/rapidrpcConfigVersion.cmake
    DESTINATION ${rapidrpc_cmake_dir})

  # pkg-config: paths relative to the .pc file's own folder, unless the
  # install folders were given as absolute paths.
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(RAPIDRPC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    set(RAPIDRPC_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
    set(RAPIDRPC_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
  else()
    file(RELATIVE_PATH up /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
    string(REGEX REPLACE "/$" "" up "${up}")
    set(RAPIDRPC_PC_PREFIX "\${pcfiledir}/${up}")
    set(RAPIDRPC_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
    set(RAPIDRPC_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  set(RAPIDRPC_PC_REQUIRES "${rapidrpc_pc_requires}: expat zlib openssl libzmq fmt")
  if(RAPIDRPC_STATIC)
    set(RAPIDRPC_PC_DEMO_REQUIRES "Requires: rapidrpc = ${PROJECT_VERSION}, gmp")
  else()
    set(RAPIDRPC_PC_DEMO_REQUIRES "Requires: rapidrpc = ${PROJECT_VERSION}\nRequires.private: gmp")
  endif()
  # The compile definitions the library's interface carries, Boost's headers
  # when they are not in a default folder, and the threads flag.
  set(RAPIDRPC_PC_CFLAGS "")
  get_target_property(definitions rapidrpc INTERFACE_COMPILE_DEFINITIONS)
  if(NOT definitions)
    set(definitions "")
  endif()
  foreach(definition IN LISTS definitions)
    string(APPEND RAPIDRPC_PC_CFLAGS " -D${definition}")
  endforeach()
  get_target_property(boost_includes Boost::headers INTERFACE_INCLUDE_DIRECTORIES)
  foreach(dir IN LISTS boost_includes)
    if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
      string(APPEND RAPIDRPC_PC_CFLAGS " -I${dir}")
    endif()
  endforeach()
  set(RAPIDRPC_PC_THREADS "")
  if(CMAKE_THREAD_LIBS_INIT)
    set(RAPIDRPC_PC_THREADS " ${CMAKE_THREAD_LIBS_INIT}")
    if(CMAKE_THREAD_LIBS_INIT STREQUAL "-pthread")
      string(APPEND RAPIDRPC_PC_CFLAGS " -pthread")
    endif()
  endif()
  get_target_property(RAPIDRPC_DEMO_OUTPUT_NAME rapidrpc_demo OUTPUT_NAME)
  if(NOT RAPIDRPC_DEMO_OUTPUT_NAME)
    set(RAPIDRPC_DEMO_OUTPUT_NAME rapidrpc_demo)
  endif()
  configure_file(${CMAKE_CURRENT_LIST_DIR}/rapidrpc.pc.in ${PROJECT_BINARY_DIR}/package/rapidrpc.pc @ONLY)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/rapidrpc-demo.pc.in ${PROJECT_BINARY_DIR}/package/rapidrpc-demo.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/rapidrpc.pc ${PROJECT_BINARY_DIR}/package/rapidrpc-demo.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
rapidrpc_install()
