#!/bin/bash
# The engine's CUDA and NCCL code paths (compiled only against a libtorch with CUDA) checked
# against the CUDA headers of this machine: each file is compiled with -fsyntax-only and the
# definitions CMake gives it in a CUDA build. Debian's libtorch ships ATen's and c10's CUDA
# headers but not the one its build generates (c10/cuda/impl/cuda_cmake_macros.h): a stand-in
# that says what a shared build says is written into the build tree.
# usage: check_cuda_syntax.sh CXX SOURCE_DIR BUILD_DIR CUDA_INCLUDE TORCH_INCLUDES(:-separated)
set -u
cxx=$1 source=$2 build=$3 cuda_include=$4 torch_includes=$5
shim="$build/cuda-syntax-shim"
includes=(-I"$source" -I"$build/engine/generated" -I"$source/engine/distributed/compat")
IFS=: read -r -a torch_dirs <<<"$torch_includes"
have_macros=0
for dir in "${torch_dirs[@]}"; do
  # the system's own folders are searched anyway; named again they break #include_next
  [ "$dir" = /usr/include ] || [ "$dir" = /usr/local/include ] || includes+=(-isystem "$dir")
  [ -f "$dir/c10/cuda/impl/cuda_cmake_macros.h" ] && have_macros=1
done
if [ "$have_macros" = 0 ]; then
  mkdir -p "$shim/c10/cuda/impl"
  printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' >"$shim/c10/cuda/impl/cuda_cmake_macros.h"
  includes+=(-isystem "$shim")
fi
includes+=(-isystem "$cuda_include")
# file: the definitions of a CUDA build (engine/CMakeLists.txt)
checks=(
  "engine/core/cuda_graph.cpp:-DENGINE_WITH_CUDA"
  "engine/core/device_memory.cpp:-DENGINE_WITH_CUDA"
  "engine/core/gpu_facts.cpp:-DENGINE_WITH_CUDA"
  "engine/distributed/group.cpp:-DUSE_C10D_NCCL"
)
failed=0
for check in "${checks[@]}"; do
  file=${check%%:*} defines=${check#*:}
  if "$cxx" -std=c++17 -fsyntax-only $defines -DUSE_DISTRIBUTED -D_GLIBCXX_USE_CXX11_ABI=1 \
    "${includes[@]}" "$source/$file" 2>"$build/cuda-syntax.err"; then
    echo "ok: $file ($defines)"
  else
    echo "FAIL: $file ($defines):"
    head -40 "$build/cuda-syntax.err"
    failed=1
  fi
done
exit $failed
