# cmake/GitInfo.cmake on a source tree that sits inside another checkout without being one (what
# `git archive BRANCH | tar -x -C ab/b` makes for tools/gpu-ab.sh): it must record the commit as
# unknown, not the enclosing checkout's. WORK is a folder of the build tree, itself inside the
# source checkout where the build is (as in CI); elsewhere the test still checks "unknown".
# Usage: cmake -DSOURCE=<repository> -DWORK=<folder> -P git_info_nested_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/harness")
file(COPY "${SOURCE}/harness/build_info.h" DESTINATION "${WORK}/harness")
file(COPY "${SOURCE}/CMakeLists.txt" DESTINATION "${WORK}")
execute_process(COMMAND "${CMAKE_COMMAND}" -DSRC=${WORK} -DOUT=${WORK}/build_info.cpp -P "${SOURCE}/cmake/GitInfo.cmake"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "GitInfo.cmake failed on ${WORK}: ${rc}")
endif()
file(READ "${WORK}/build_info.cpp" text)
if(NOT text MATCHES "git_commit\\(\\) { return \"unknown\"; }")
  message(FATAL_ERROR "GitInfo.cmake gave ${WORK}, a folder inside another checkout, a commit:\n${text}")
endif()
if(NOT text MATCHES "git_dirty\\(\\) { return false; }")
  message(FATAL_ERROR "GitInfo.cmake gave ${WORK} a dirty flag:\n${text}")
endif()
