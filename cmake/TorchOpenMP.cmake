# One OpenMP runtime in the process: the engine's own parallel loops (at::parallel_for in
# train/sgd.cpp, compiled with -fopenmp) must call the runtime libtorch itself links. Debian's
# libtorch links the system's libgomp.so.1; PyTorch's wheels bring a copy of their own
# (libgomp-<hash>.so.1 in torch/lib). Linking the system's beside such a copy starts two thread
# pools that compete for the cores and ignore each other's thread counts (docs/gpu.md).

# The OpenMP runtime named by a NEEDED entry of `objdump -p` text, or "" when there is none.
function(engine_openmp_needed dump out_var)
  string(REGEX MATCHALL "NEEDED[ \t]+[^\n]+" needed "${dump}")
  set(found "")
  foreach(entry IN LISTS needed)
    string(REGEX REPLACE "NEEDED[ \t]+" "" name "${entry}")
    string(STRIP "${name}" name)
    if(name MATCHES "^lib(gomp|iomp5|omp)([-.].*)?\\.so")
      set(found "${name}")
    endif()
  endforeach()
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

# Sets ENGINE_OPENMP_LIBRARY to what the engine links for OpenMP: the system's runtime when it is
# the one libtorch links, libtorch's own copy (a path) when libtorch ships one, "" when libtorch
# has no OpenMP (the loops then stay serial). Fails the configuration when libtorch needs a
# runtime that is neither.
function(engine_select_openmp_runtime)
  find_library(ENGINE_TORCH_CPU_LIBRARY torch_cpu HINTS "${TORCH_INSTALL_PREFIX}/lib")
  set(torch_cpu "${ENGINE_TORCH_CPU_LIBRARY}")
  if(NOT torch_cpu)
    message(FATAL_ERROR "OpenMP: libtorch_cpu was not found beside libtorch's CMake files")
  endif()
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${torch_cpu}" OUTPUT_VARIABLE dump
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "OpenMP: '${CMAKE_OBJDUMP} -p ${torch_cpu}' failed")
  endif()
  engine_openmp_needed("${dump}" needed)
  set(chosen "")
  if(needed)
    get_filename_component(torch_lib_dir "${torch_cpu}" DIRECTORY)
    set(system_sonames "")
    foreach(library IN LISTS OpenMP_CXX_LIBRARIES)
      get_filename_component(resolved "${library}" REALPATH)
      execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${resolved}" OUTPUT_VARIABLE library_dump
                      ERROR_QUIET)
      string(REGEX MATCH "SONAME[ \t]+[^\n]+" soname "${library_dump}")
      string(REGEX REPLACE "SONAME[ \t]+" "" soname "${soname}")
      string(STRIP "${soname}" soname)
      if(soname STREQUAL needed)
        set(chosen "${library}")
      endif()
    endforeach()
    if(NOT chosen AND EXISTS "${torch_lib_dir}/${needed}")
      set(chosen "${torch_lib_dir}/${needed}")
    endif()
    if(NOT chosen)
      message(FATAL_ERROR "OpenMP: libtorch (${torch_cpu}) needs ${needed}, which is neither the "
                          "compiler's OpenMP runtime (${OpenMP_CXX_LIBRARIES}) nor a file in "
                          "${torch_lib_dir}: the engine would load a second OpenMP runtime")
    endif()
  endif()
  message(STATUS "OpenMP: libtorch links ${needed}; the engine links ${chosen}")
  set(ENGINE_OPENMP_NEEDED "${needed}" PARENT_SCOPE)
  set(ENGINE_OPENMP_LIBRARY "${chosen}" PARENT_SCOPE)
endfunction()
