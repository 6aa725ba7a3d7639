# cuDNN ships without a CMake package. Look in both layouts that exist: the CUDA install
# (/usr/local/cuda/{include,lib64}) and Debian/Ubuntu's multiarch folders. Optional: without it
# the `cudnn` implementation is left out and configure says so.
find_path(MTABENCH_CUDNN_INCLUDE_DIR cudnn.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/include/x86_64-linux-gnu
                /usr/include/aarch64-linux-gnu /usr/include)
find_library(MTABENCH_CUDNN_LIBRARY cudnn
             HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64 /usr/local/cuda/lib
                   /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu)
if(MTABENCH_CUDNN_INCLUDE_DIR AND MTABENCH_CUDNN_LIBRARY)
  set(MTABENCH_HAVE_CUDNN ON)
  add_library(mtabench::cudnn UNKNOWN IMPORTED)
  set_target_properties(mtabench::cudnn PROPERTIES
    IMPORTED_LOCATION "${MTABENCH_CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${MTABENCH_CUDNN_INCLUDE_DIR}")
  message(STATUS "mtabench: cuDNN found: ${MTABENCH_CUDNN_LIBRARY} (${MTABENCH_CUDNN_INCLUDE_DIR})")
else()
  set(MTABENCH_HAVE_CUDNN OFF)
  message(STATUS "mtabench: cuDNN NOT found (looked in the CUDA install and /usr/{include,lib}/"
                 "<multiarch>); the `cudnn` implementation is not built")
endif()
