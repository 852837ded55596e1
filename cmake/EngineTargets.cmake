# Helpers shared by the engine's libraries and tests: one precompiled header for libtorch,
# built once by engine_core and reused everywhere else (each libtorch TU costs ~15 s without it).

set(ENGINE_PCH_TARGET engine_core)

function(engine_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  if(name STREQUAL ENGINE_PCH_TARGET)
    target_precompile_headers(${name} PRIVATE ${PROJECT_SOURCE_DIR}/engine/core/pch.hpp)
  else()
    target_precompile_headers(${name} REUSE_FROM ${ENGINE_PCH_TARGET})
  endif()
endfunction()

function(engine_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  target_precompile_headers(${name} REUSE_FROM ${ENGINE_PCH_TARGET})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "ENGINE_TEST_TMP=${CMAKE_BINARY_DIR}/test-tmp")
endfunction()
