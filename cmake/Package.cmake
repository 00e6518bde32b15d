# Packages: `cpack -G DEB` in a build directory makes lanecp_VERSION_ARCH.deb
# from what cmake/Install.cmake installs.  Build it from a product build
# (Release, no test hooks): scripts/test does, and tests/package checks
# the result.
set(CPACK_PACKAGE_NAME lanecp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "lanecp maintainers")
set(CPACK_PACKAGE_CONTACT
  "lanecp maintainers <maintainers@users.noreply.a-seed-e056ef54.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "copy big files and trees over SSH across parallel TCP streams")
set(CPACK_PACKAGE_INSTALL_DIRECTORY lanecp)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${CPACK_PACKAGE_CONTACT})
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The extended description (CPack puts the summary above it).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "lanecp copies big files and directory trees between hosts as fast as the
network allows. Like bbcp it stripes a file's blocks across several
parallel TCP streams, so a long or lossy path is not held to one TCP
window or to SSH's channel window; the control connection is SSH (your
ssh_config, known_hosts, keys and ssh-agent), and every data stream is
keyed by a per-transfer secret that only travelled over SSH (TLS 1.3 with
a pre-shared key, then AES-128-GCM). The same program runs as the agent
on the remote host: where lanecp is not installed, it copies its own
static agent there over SSH and caches it (or install it there, or
refuse the copy with --no-push).")
# Depends from the shared libraries the binary links (dpkg-shlibdeps,
# from dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
find_program(LC_DPKG dpkg)
if(LC_DPKG)
  execute_process(COMMAND ${LC_DPKG} --print-architecture
    OUTPUT_VARIABLE CPACK_DEBIAN_PACKAGE_ARCHITECTURE
    OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
set(CPACK_GENERATOR DEB)
include(CPack)
