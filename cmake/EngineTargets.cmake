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

# The tests' own code (the engine's libraries they link stay optimised) compiles at -O0: most of
# a test TU's compile time at -O3 goes to optimising code that runs once, and the suite runs as
# fast (a cold build of the test targets on 2 cores fell by about a third: docs/architecture.md,
# "Building"). GCC takes a precompiled header only at the optimisation level it was built with,
# so the tests have one of their own, the same header built at -O0 (engine_test_pch, made by
# engine_test_pch_target below, from tests/CMakeLists.txt).
set(ENGINE_TEST_PCH_TARGET engine_test_pch)

function(engine_test_pch_target)
  add_library(${ENGINE_TEST_PCH_TARGET} OBJECT ${PROJECT_SOURCE_DIR}/tests/test_pch.cpp)
  target_link_libraries(${ENGINE_TEST_PCH_TARGET} PRIVATE ${ENGINE_PCH_TARGET})
  target_compile_options(${ENGINE_TEST_PCH_TARGET} PRIVATE -O0)
  target_precompile_headers(${ENGINE_TEST_PCH_TARGET} PRIVATE
                            ${PROJECT_SOURCE_DIR}/engine/core/pch.hpp)
endfunction()

# A test program's own sources: -O0, with the tests' precompiled header.
function(engine_test_compile name)
  target_compile_options(${name} PRIVATE -O0)
  target_precompile_headers(${name} REUSE_FROM ${ENGINE_TEST_PCH_TARGET})
endfunction()

function(engine_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  engine_test_compile(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "ENGINE_TEST_TMP=${CMAKE_BINARY_DIR}/test-tmp")
endfunction()

# engine_embed_files(OUTPUT file.cpp NAMESPACE ns FUNCTION name SOURCES files...): generates
# OUTPUT with the files as raw strings and `const char* ns::name(const std::string& file_name)`
# (cmake/embed_files.cmake), again whenever one of them changes.
function(engine_embed_files)
  cmake_parse_arguments(ARG "" "OUTPUT;NAMESPACE;FUNCTION" "SOURCES" ${ARGN})
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ARG_OUTPUT} "-DSOURCES=${ARG_SOURCES}"
            -DNAMESPACE=${ARG_NAMESPACE} -DFUNCTION=${ARG_FUNCTION}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${ARG_FUNCTION}'s files" VERBATIM)
endfunction()
