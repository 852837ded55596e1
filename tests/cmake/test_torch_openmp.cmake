# cmake -P tests/cmake/test_torch_openmp.cmake: which OpenMP runtime cmake/TorchOpenMP.cmake
# reads from libtorch_cpu's NEEDED entries, for Debian's libtorch and the shapes PyTorch's wheels
# have had (a renamed copy, an unrenamed copy, LLVM's or Intel's runtime, none).
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/TorchOpenMP.cmake)

function(expect_needed dump expected)
  engine_openmp_needed("${dump}" got)
  if(NOT got STREQUAL expected)
    message(FATAL_ERROR "from:\n${dump}\nexpected '${expected}', got '${got}'")
  endif()
endfunction()

set(head "Dynamic Section:\n  NEEDED               libc10.so\n")
expect_needed("${head}  NEEDED               libgomp.so.1\n  NEEDED               libc.so.6\n"
              "libgomp.so.1")
expect_needed("${head}  NEEDED               libgomp-a34b3233.so.1\n" "libgomp-a34b3233.so.1")
expect_needed("${head}  NEEDED               libomp.so\n" "libomp.so")
expect_needed("${head}  NEEDED               libiomp5.so\n" "libiomp5.so")
expect_needed("${head}  NEEDED               libopenblas.so.0\n" "")
# a library whose name only starts like one is not a runtime
expect_needed("${head}  NEEDED               libompitrace.so\n" "")
message(STATUS "engine_openmp_needed: 6 cases passed")
