#pragma once
// Facts about this build, compiled in (cmake/BuildInfo.cmake); records carry them as provenance.
namespace mtabench::build_info {
const char* version();
const char* build_type();
const char* cxx_flags();
const char* cuda_flags();
const char* cuda_architectures();
const char* cxx_compiler();
const char* cuda_compiler();
const char* source_dir();
const char* git_commit();
bool git_dirty();
const char* source_digest();  // cmake/SourceDigest.cmake: the code measured, git or not
}  // namespace mtabench::build_info
