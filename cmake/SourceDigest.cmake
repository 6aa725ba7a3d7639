# source_digest: sha256 over the sorted lines "<sha256 of file>  <path>" of every file under
# harness/, impls/ and cmake/ plus the top CMakeLists.txt -- the code a measurement ran,
# whatever git says (a device copy of a working tree may carry stale git metadata: the H200
# records of 2026-11-29 name the session's first commit, dirty). Include with SRC set, or run
#   cmake -DSRC=<checkout> -DPRINT=1 -P cmake/SourceDigest.cmake
# to print the digest of a checkout (tools/source-digest.sh does this for a commit).
# The checkout path is escaped for the glob (a [ or ] in it would otherwise be a character
# class and change the file set); symlinked folders are not followed (as Python's os.walk in
# tests/e2e does not).
string(REPLACE "[" "<<MTAB-LB>>" _sd_root "${SRC}")
string(REPLACE "]" "[]]" _sd_root "${_sd_root}")
string(REPLACE "<<MTAB-LB>>" "[[]" _sd_root "${_sd_root}")
string(REPLACE "*" "[*]" _sd_root "${_sd_root}")
string(REPLACE "?" "[?]" _sd_root "${_sd_root}")
cmake_policy(PUSH)
cmake_policy(SET CMP0009 NEW)
file(GLOB_RECURSE _sd_files RELATIVE "${SRC}" "${_sd_root}/harness/*" "${_sd_root}/impls/*" "${_sd_root}/cmake/*")
cmake_policy(POP)
list(FIND _sd_files "harness/build_info.h" _sd_known)
if(_sd_known EQUAL -1)
  message(FATAL_ERROR "SourceDigest.cmake: no harness/build_info.h under ${SRC}: not a checkout")
endif()
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
