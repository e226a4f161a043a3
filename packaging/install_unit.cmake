# Run at install time (cmake --install, cpack), when the prefix is final:
# writes the systemd unit with the installed paths and puts it, and the
# settings file it reads, where systemd and Debian look for them.
# In: LULL_PACKAGING_DIR, LULL_BINDIR, LULL_DOCDIR (relative to the prefix),
# LULL_STAGING_DIR (the build folder: an install script's current folder is
# wherever `cmake --install` was run from, often the source tree).
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(unit_dir /lib/systemd/system)
  set(defaults_dir /etc/default)
else()
  set(unit_dir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
  set(defaults_dir ${CMAKE_INSTALL_PREFIX}/etc/default)
endif()
set(LULL_BINARY ${CMAKE_INSTALL_PREFIX}/${LULL_BINDIR}/lull)
set(LULL_DOCS ${CMAKE_INSTALL_PREFIX}/${LULL_DOCDIR})
set(LULL_DEFAULTS ${defaults_dir}/lull)
set(staged ${LULL_STAGING_DIR}/lull.service)
configure_file(${LULL_PACKAGING_DIR}/systemd/lull.service.in ${staged} @ONLY)
file(INSTALL ${staged} DESTINATION ${unit_dir})
file(INSTALL ${LULL_PACKAGING_DIR}/systemd/lull.default DESTINATION ${defaults_dir} RENAME lull)
