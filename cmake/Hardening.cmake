# Hardening of what lanecp builds (the sink may run as root), as Debian's
# dpkg-buildflags "hardening=+all" would give it: _FORTIFY_SOURCE (3 where
# the compiler and glibc have __builtin_dynamic_object_size, else 2; it
# needs optimisation, so not in a Debug build), -fstack-protector-strong,
# position-independent executables, and a read-only GOT after start-up
# (-z relro -z now).  Global, so the core libraries, the programs and the
# test programs are built alike: the tests run the code that is shipped.
# LC_HARDEN=OFF turns it off (a toolchain that lacks one of them).
option(LC_HARDEN "Build with FORTIFY, stack protector, PIE and relro/now" ON)
if(LC_HARDEN)
  include(CheckCSourceCompiles)
  include(CheckCCompilerFlag)
  include(CheckPIESupported)
  check_pie_supported(LANGUAGES C)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  add_compile_options(-fstack-protector-strong)
  check_c_source_compiles([=[
#include <stddef.h>
int main(void) { char b[4]; return (int)__builtin_dynamic_object_size(b, 0) - 4; }
]=] LC_HAVE_DYNAMIC_OBJECT_SIZE)
  if(LC_HAVE_DYNAMIC_OBJECT_SIZE)
    set(lc_fortify 3)
  else()
    set(lc_fortify 2)
  endif()
  # -U first: some toolchains define it already (Ubuntu's gcc does)
  # not with a sanitizer: ASan and TSan check the same calls themselves
  # and their interceptors do not see the _chk variants
  if(NOT (LC_ASAN OR LC_TSAN))
    add_compile_options(
      "$<$<NOT:$<CONFIG:Debug>>:-U_FORTIFY_SOURCE;-D_FORTIFY_SOURCE=${lc_fortify}>")
  endif()
  add_link_options(-Wl,-z,relro -Wl,-z,now)
endif()
