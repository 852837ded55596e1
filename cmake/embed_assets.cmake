# Writes a C++ file holding the live page's files (engine/report/live_page/) as raw strings,
# with a lookup by file name. Run as: cmake -DOUTPUT=out.cpp -DSOURCES="a.html;b.js" -P ...
set(body "// Generated from engine/report/live_page/ by cmake/embed_assets.cmake; do not edit.\n")
string(APPEND body "#include <string>\n\nnamespace engine::report {\n\n")
string(APPEND body "const char* live_asset(const std::string& name) {\n")
foreach(source IN LISTS SOURCES)
  get_filename_component(name ${source} NAME)
  file(READ ${source} text)
  string(APPEND body "  if (name == \"${name}\") return R\"ENGINE_ASSET(${text})ENGINE_ASSET\";\n")
endforeach()
string(APPEND body "  return nullptr;\n}\n\n}  // namespace engine::report\n")
file(WRITE ${OUTPUT}.tmp "${body}")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
