# Run at install time: writes lull(1) from the built binary's own help (`lull
# --help` and every command's `--help`), so the page never disagrees with the
# program, gzipped without a name or time stamp, and installs it.
# In: LULL_BINARY_BUILT (the built lull), LULL_VERSION, LULL_STAGING_DIR,
# LULL_MANDIR (relative to the prefix).
function(roff_block text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" text "\n${text}")
  set(${out} ".nf\n${text}\n.fi\n" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${LULL_BINARY_BUILT} --help OUTPUT_VARIABLE usage RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man page: ${LULL_BINARY_BUILT} --help failed")
endif()
roff_block("${usage}" usage_roff)
string(CONCAT page ".TH LULL 1 \"\" \"lull ${LULL_VERSION}\" \"User Commands\"\n.SH NAME\n"
         "lull \\- compile and serve accuracy-maximizing inference policies\n"
         ".SH SYNOPSIS\n.B lull\n\\fIcommand\\fR [\\fIoptions\\fR]\n.SH DESCRIPTION\n${usage_roff}"
         ".SH COMMANDS\n")
string(FIND "${usage}" "commands:\n" at)
string(SUBSTRING "${usage}" ${at} -1 listing)
string(REGEX MATCHALL "\n  [a-z]+( [a-z]+)?  " names "${listing}")
foreach(n ${names})
  string(STRIP "${n}" name)
  string(REPLACE " " ";" words "${name}")
  execute_process(COMMAND ${LULL_BINARY_BUILT} ${words} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "man page: lull ${name} --help failed")
  endif()
  roff_block("${help}" help_roff)
  string(APPEND page ".SS lull ${name}\n${help_roff}")
endforeach()
string(APPEND page ".SH SEE ALSO\nThe user guide: /usr/share/doc/lull/user-guide.md (or docs/user-guide.md in the source).\n")
file(WRITE ${LULL_STAGING_DIR}/lull.1 "${page}")
execute_process(COMMAND gzip -9nf ${LULL_STAGING_DIR}/lull.1 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man page: gzip failed")
endif()
file(INSTALL ${LULL_STAGING_DIR}/lull.1.gz DESTINATION ${CMAKE_INSTALL_PREFIX}/${LULL_MANDIR}/man1)
