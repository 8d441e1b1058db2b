# Precompiled LibTorch headers, built once per build tree and reused by every
# target that includes LibTorch.
#
# Parsing LibTorch's headers is most of the compile time of a translation
# unit here (torch/torch.h alone takes 12 s at -O3 on the 2-core VM, a TU of
# ours typically 2-8 s more), and every one of the project's ~70 LibTorch
# TUs parsed them again. Two headers are precompiled:
#  * dfmpc_torch_pch: ATen and the torch::nn / optim / serialize headers the
#    libraries and the dfmpc tool use;
#  * dfmpc_torch_test_pch: the same plus torch/torch.h and GoogleTest, for
#    the test binaries (most tests include torch/torch.h).
# GCC uses a precompiled header only when the TU's code-generation flags
# match those it was built with (-Winvalid-pch says when they do not), and
# CMake compiles executables with -fPIE but libraries with -fPIC: every
# consumer is compiled with -fPIC (valid in a PIE executable too).
# -DDFMPC_PRECOMPILED_HEADERS=OFF turns all of this off (e.g. for clangd or
# include-what-you-use checks).
option(DFMPC_PRECOMPILED_HEADERS "Precompile LibTorch's headers (faster builds)" ON)

set(DFMPC_TORCH_PCH_HEADERS
  <ATen/ATen.h>
  <ATen/CPUGeneratorImpl.h>
  <ATen/Parallel.h>
  <c10/core/InferenceMode.h>
  <torch/nn/module.h>
  <torch/nn/modules/activation.h>
  <torch/nn/modules/container/sequential.h>
  <torch/nn/modules/conv.h>
  <torch/nn/modules/linear.h>
  <torch/nn/modules/normalization.h>
  <torch/optim/adamw.h>
  <torch/serialize.h>)

# An object library that compiles only the precompiled header.
function(_dfmpc_add_pch_target name)
  add_library(${name} OBJECT ${PROJECT_SOURCE_DIR}/cmake/precompiled_header_anchor.cpp)
  # The warning flags too: -Wpedantic changes predefined macros, and a
  # precompiled header is only used with the macros it was built with.
  target_link_libraries(${name} PRIVATE ${TORCH_LIBRARIES} ${ARGN} dfmpc_warnings)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${name} PRIVATE -Winvalid-pch)
endfunction()

if(DFMPC_PRECOMPILED_HEADERS)
  _dfmpc_add_pch_target(dfmpc_torch_pch)
  target_precompile_headers(dfmpc_torch_pch PRIVATE ${DFMPC_TORCH_PCH_HEADERS})
endif()

# dfmpc_use_torch_pch(<target> [TEST]): compiles <target> with the library
# (or, with TEST, the test) precompiled header.
function(dfmpc_use_torch_pch target)
  if(NOT DFMPC_PRECOMPILED_HEADERS)
    return()
  endif()
  cmake_parse_arguments(ARG "TEST" "" "" ${ARGN})
  set(producer dfmpc_torch_pch)
  if(ARG_TEST)
    set(producer dfmpc_torch_test_pch)
    if(NOT TARGET ${producer})
      find_package(GTest REQUIRED)
      _dfmpc_add_pch_target(${producer} GTest::gtest)
      target_precompile_headers(${producer} PRIVATE ${DFMPC_TORCH_PCH_HEADERS}
                                <torch/torch.h> <gtest/gtest.h>)
    endif()
  endif()
  target_precompile_headers(${target} REUSE_FROM ${producer})
  # After CMake's -fPIE for executables, so that -fPIC wins (see above).
  target_compile_options(${target} PRIVATE -fPIC -Winvalid-pch)
endfunction()
