# Writes a C++ file holding the given Lua sources as raw strings, with a lookup by file name.
# Run as: cmake -DOUTPUT=out.cpp -DSOURCES="a.lua;b.lua" -P embed_lua.cmake
set(body "// Generated from engine/lua/*.lua by cmake/embed_lua.cmake; do not edit.\n")
string(APPEND body "#include <cstring>\n#include <string>\n\nnamespace engine::lua {\n\n")
string(APPEND body "const char* embedded_lua(const std::string& name) {\n")
foreach(source IN LISTS SOURCES)
  get_filename_component(name ${source} NAME)
  file(READ ${source} text)
  string(APPEND body "  if (name == \"${name}\") return R\"ENGINE_LUA(${text})ENGINE_LUA\";\n")
endforeach()
string(APPEND body "  return nullptr;\n}\n\n}  // namespace engine::lua\n")
file(WRITE ${OUTPUT}.tmp "${body}")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
