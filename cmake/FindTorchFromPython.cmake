# Finds libtorch from -DTorch_DIR, or from the python3 on PATH
# (torch.utils.cmake_prefix_path). Sets Torch_FOUND, MEMLIFE_TORCH_VERSION.
# Found on every configure, not only the first (before Torch_DIR is cached):
# the version query below and the pytest-based tests need it.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Torch_DIR)
  if(Python3_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c "import torch; print(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE _memlife_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE _memlife_torch_rc)
    if(_memlife_torch_rc EQUAL 0)
      list(APPEND CMAKE_PREFIX_PATH ${_memlife_torch_prefix})
    endif()
  endif()
endif()
# TorchConfig drags in CUDA discovery when the wheel is a CUDA build; that
# is fine on a machine with the toolkit and quietly off elsewhere.
# Without TORCH_CUDA_ARCH_LIST, TorchConfig compiles and runs a GPU-probe
# program, which fails on a machine without a GPU: memlife builds no kernels
# with torch's NVCC flags, so any list will do (the presets set the same).
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND "$ENV{TORCH_CUDA_ARCH_LIST}" STREQUAL "")
  set(TORCH_CUDA_ARCH_LIST "9.0" CACHE STRING "CUDA architectures for TorchConfig (no GPU probe)")
endif()
find_package(Torch QUIET)
if(Torch_FOUND)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import torch; print(torch.__version__)"
    OUTPUT_VARIABLE MEMLIFE_TORCH_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  message(STATUS "memlife: building the torch plugin against torch ${MEMLIFE_TORCH_VERSION} (${TORCH_INSTALL_PREFIX})")
endif()
