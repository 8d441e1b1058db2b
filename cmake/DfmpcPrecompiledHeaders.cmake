# Precompiled LibTorch headers, built once per build tree and reused by every
# target that includes LibTorch.
#
# Parsing LibTorch's headers is most of the compile time of a translation
# unit here (ATen/ATen.h alone takes 4.5 s at -O3 on the 2-core VM,
# torch/torch.h 11-12 s), and every one of the project's ~90 LibTorch TUs
# parsed them again. Three headers are precompiled:
#  * dfmpc_torch_pch: ATen, for the libraries;
#  * dfmpc_torch_test_pch: ATen, torch's tensor factories and utilities
#    (torch/types.h, torch/utils.h: what the tests use of torch/torch.h,
#    which they no longer include) and GoogleTest, for the test binaries;
#  * dfmpc_torch_cli_pch: ATen and CLI11, for the command-line tools (CLI11
#    is header-only and every command's file includes it).
# GCC uses a precompiled header only when the TU's code-generation flags
# match those it was built with (-Winvalid-pch says when they do not), and
# CMake compiles executables with -fPIE but libraries with -fPIC: every
# consumer is compiled with -fPIC (valid in a PIE executable too).
# -DDFMPC_PRECOMPILED_HEADERS=OFF turns all of this off (e.g. for clangd or
# include-what-you-use checks).
option(DFMPC_PRECOMPILED_HEADERS "Precompile LibTorch's headers (faster builds)" ON)

# Only ATen: a precompiled header is loaded whole by every TU that uses it,
# at about a second per 100 MB here, so what few TUs need (torch::nn, optim,
# serialize) costs more to load everywhere than to parse where it is used.
set(DFMPC_TORCH_PCH_HEADERS <ATen/ATen.h>)

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

# dfmpc_without_pch(<source>...): sources of a precompiled-header target that
# include no LibTorch (nor CLI11): loading the header costs such a file 2-6 s
# where it compiles in well under one without it. Call it in the directory
# that adds the sources.
function(dfmpc_without_pch)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()

# dfmpc_use_torch_pch(<target> [TEST | CLI]): compiles <target> with the
# libraries' precompiled header, or the tests' (TEST), or the command-line
# tools' (CLI: also CLI11, a header-only library that takes 4.5 s to parse).
function(dfmpc_use_torch_pch target)
  if(NOT DFMPC_PRECOMPILED_HEADERS)
    return()
  endif()
  cmake_parse_arguments(ARG "TEST;CLI" "" "" ${ARGN})
  set(producer dfmpc_torch_pch)
  if(ARG_TEST)
    set(producer dfmpc_torch_test_pch)
    if(NOT TARGET ${producer})
      find_package(GTest REQUIRED)
      _dfmpc_add_pch_target(${producer} GTest::gtest)
      target_precompile_headers(${producer} PRIVATE ${DFMPC_TORCH_PCH_HEADERS}
                                <torch/types.h> <torch/utils.h> <gtest/gtest.h>)
    endif()
  elseif(ARG_CLI)
    set(producer dfmpc_torch_cli_pch)
    if(NOT TARGET ${producer})
      find_package(CLI11 REQUIRED)
      _dfmpc_add_pch_target(${producer} CLI11::CLI11 Eigen3::Eigen)
      target_precompile_headers(${producer} PRIVATE ${DFMPC_TORCH_PCH_HEADERS} <CLI/CLI.hpp>)
    endif()
  endif()
  target_precompile_headers(${target} REUSE_FROM ${producer})
  # After CMake's -fPIE for executables, so that -fPIC wins (see above).
  target_compile_options(${target} PRIVATE -fPIC -Winvalid-pch)
endfunction()
