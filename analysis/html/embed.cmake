# embed.cmake — writes html_assets.c: the page's source files (page.html,
# page.css, page.js in this directory) as C byte arrays, declared in
# analysis/html_assets.h. Run in script mode by analysis/CMakeLists.txt:
#   cmake -DOUTPUT=path/html_assets.c -P embed.cmake
# ext/rperf/extconf.rb writes the same file for the extension in Ruby.
# Each array gets a trailing 0 byte (so an empty file is still a valid
# array); the _len constant excludes it.
if(NOT OUTPUT)
  message(FATAL_ERROR "embed.cmake: pass -DOUTPUT=FILE")
endif()
set(text "/* Generated from analysis/html/ by embed.cmake; do not edit. */\n#include \"html_assets.h\"\n")
foreach(name page.html page.css page.js)
  file(READ "${CMAKE_CURRENT_LIST_DIR}/${name}" hex HEX)
  string(LENGTH "${hex}" digits)
  math(EXPR size "${digits} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # 16 bytes (80 characters) per line.
  string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
  string(REPLACE "." "_" ident "rga_html_${name}")
  string(APPEND text "const unsigned char ${ident}[] = {\n${bytes}0x00};\nconst size_t ${ident}_len = ${size};\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "${text}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
