# What `cmake --install` and the packages (cmake/Package.cmake) ship: the
# one list of install() rules.  Paths are relative to the install prefix
# (/usr in the .deb, /usr/local by default).
include(GNUInstallDirs)
# Installing (and cpack, which installs) does not build everything first:
# a package needs only the targets below, and the test programs of a
# product build are no part of it.  Build, then install:
#   cmake --build build && cmake --install build
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# Programs.
install(TARGETS lanecp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The agent alone (cmd/lanecp-agent.c), which lanecp pushes to a host that
# has no lanecp; src/push.c looks for it next to lanecp, then here.
install(TARGETS lanecp-agent
  RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/lanecp)

# The manual, gzipped as Debian policy wants (-n: no name or time stamp in
# it, so the same page gives the same bytes).
find_program(LC_GZIP gzip REQUIRED)
set(LC_MAN_GZ ${PROJECT_BINARY_DIR}/man/lanecp.1.gz)
add_custom_command(OUTPUT ${LC_MAN_GZ}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
  COMMAND ${LC_GZIP} -9 -n -c ${PROJECT_SOURCE_DIR}/man/lanecp.1 > ${LC_MAN_GZ}
  DEPENDS ${PROJECT_SOURCE_DIR}/man/lanecp.1
  COMMENT "gzip man/lanecp.1"
  VERBATIM)
add_custom_target(lanecp_man ALL DEPENDS ${LC_MAN_GZ})
install(FILES ${LC_MAN_GZ} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# Bash completion, where bash-completion loads it on demand (its
# completionsdir, share/bash-completion/completions/<command>).
install(FILES ${PROJECT_SOURCE_DIR}/completion/lanecp.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME lanecp)

# Documentation.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/SECURITY.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
