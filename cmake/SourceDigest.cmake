# source_digest: sha256 over the sorted lines "<sha256 of file>  <path>" of every file under
# harness/, impls/ and cmake/ plus the top CMakeLists.txt -- the code a measurement ran,
# whatever git says (a device copy of a working tree may carry stale git metadata: the H200
# records of 2026-11-29 name the session's first commit, dirty). Include with SRC set, or run
#   cmake -DSRC=<checkout> -DPRINT=1 -P cmake/SourceDigest.cmake
# to print the digest of a checkout (tools/source-digest.sh does this for a commit).
file(GLOB_RECURSE _sd_files RELATIVE "${SRC}" "${SRC}/harness/*" "${SRC}/impls/*" "${SRC}/cmake/*")
list(APPEND _sd_files CMakeLists.txt)
list(SORT _sd_files)
set(_sd_lines "")
foreach(_f IN LISTS _sd_files)
  file(SHA256 "${SRC}/${_f}" _h)
  string(APPEND _sd_lines "${_h}  ${_f}\n")
endforeach()
string(SHA256 source_digest "${_sd_lines}")
if(PRINT)
  message("${source_digest}")
endif()
