# `cmake -S <src> -B <tmp>` with no preset and no TORCH_CUDA_ARCH_LIST must
# configure on a machine without a GPU (a CUDA torch wheel's TorchConfig
# otherwise runs a GPU probe that fails). Run as:
#   cmake -DSRC=<source dir> -DWORK=<scratch dir> [-DEXPECT_TORCH=ON] -P plain_configure.cmake
unset(ENV{TORCH_CUDA_ARCH_LIST})
file(REMOVE_RECURSE "${WORK}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${SRC}" -B "${WORK}" -DMEMLIFE_BUILD_TESTS=OFF
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "plain configure failed (${rc}):\n${out}\n${err}")
endif()
if(EXPECT_TORCH AND NOT out MATCHES "building the torch plugin against torch")
  message(FATAL_ERROR "plain configure found no torch:\n${out}\n${err}")
endif()
file(REMOVE_RECURSE "${WORK}")
message(STATUS "plain configure: ok")
