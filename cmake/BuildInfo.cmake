# Build provenance compiled into the binary. Static facts (build type, flags, compilers) are
# configured once; the git commit and dirty flag are re-read on every build by a script that
# rewrites its output only when it changed, so records always name the commit they were built from.
string(TOUPPER "${CMAKE_BUILD_TYPE}" _bt)
set(MTABENCH_CXX_FLAGS_ALL "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_bt}}")
set(MTABENCH_CUDA_FLAGS_ALL "${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_${_bt}}")
string(STRIP "${MTABENCH_CXX_FLAGS_ALL}" MTABENCH_CXX_FLAGS_ALL)
string(STRIP "${MTABENCH_CUDA_FLAGS_ALL}" MTABENCH_CUDA_FLAGS_ALL)
configure_file(${PROJECT_SOURCE_DIR}/cmake/build_info_static.cpp.in
               ${PROJECT_BINARY_DIR}/generated/build_info_static.cpp @ONLY)
add_custom_target(mtabench_git_info
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR}
          -DOUT=${PROJECT_BINARY_DIR}/generated/build_info_git.cpp
          -P ${PROJECT_SOURCE_DIR}/cmake/GitInfo.cmake
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  BYPRODUCTS ${PROJECT_BINARY_DIR}/generated/build_info_git.cpp
  COMMENT "mtabench: reading git commit" VERBATIM)
add_library(mtabench_build_info STATIC
  ${PROJECT_BINARY_DIR}/generated/build_info_static.cpp
  ${PROJECT_BINARY_DIR}/generated/build_info_git.cpp)
add_dependencies(mtabench_build_info mtabench_git_info)
target_include_directories(mtabench_build_info PUBLIC ${PROJECT_SOURCE_DIR})
