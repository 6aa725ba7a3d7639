# mtabench_embed_file(<input> <output.cpp> <function>): a .cpp defining
# `const char* <function>()` that returns the file's text, regenerated when the file changes.
function(mtabench_embed_file input output fn)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${input})
  file(READ ${input} content)
  file(WRITE ${output}.tmp
       "// generated from ${input} by cmake/EmbedFile.cmake\nnamespace mtabench {\nconst char* ${fn}() {\n  return R\"mtabench_embed(${content})mtabench_embed\";\n}\n}  // namespace mtabench\n")
  file(COPY_FILE ${output}.tmp ${output} ONLY_IF_DIFFERENT)
endfunction()
