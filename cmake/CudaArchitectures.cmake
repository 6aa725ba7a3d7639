# Picks CMAKE_CUDA_ARCHITECTURES: the option if set, else the local GPU's compute capability
# (asked of nvidia-smi, so it works before any CUDA code is built), else a list covering
# RTX 30xx (86), A100 (80) and H100/H200 (90).
if(MTABENCH_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "${MTABENCH_CUDA_ARCHITECTURES}")
elseif(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  find_program(MTABENCH_NVIDIA_SMI nvidia-smi)
  set(_local_arch "")
  if(MTABENCH_NVIDIA_SMI)
    execute_process(COMMAND ${MTABENCH_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE _caps RESULT_VARIABLE _rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 20)
    if(_rc EQUAL 0 AND _caps MATCHES "^[0-9]+\\.[0-9]+")
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" _caps "${_caps}")
      foreach(_cap IN LISTS _caps)
        string(REPLACE "." "" _a "${_cap}")
        list(APPEND _local_arch ${_a})
      endforeach()
      list(REMOVE_DUPLICATES _local_arch)
    endif()
  endif()
  # A compute capability 9.0 GPU (H100, H200) is built as 90a: the fused kernel's wgmma
  # instance needs its architecture-specific features (impls/CMakeLists.txt).
  list(TRANSFORM _local_arch REPLACE "^90$" "90a")
  if(_local_arch)
    set(CMAKE_CUDA_ARCHITECTURES "${_local_arch}")
    message(STATUS "mtabench: CUDA architectures from the local GPU: ${_local_arch}")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "80;86;90")
    message(STATUS "mtabench: no local GPU found; CUDA architectures 80;86;90")
  endif()
endif()
