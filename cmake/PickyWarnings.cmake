# Picky warnings, applied per target with lc_picky(target).
# LC_WERROR=ON makes every one of them an error (CI builds all variants,
# Release included, with it).
option(LC_WERROR "Treat compiler warnings as errors" OFF)
set(LC_PICKY_FLAGS
  -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion -Wformat=2
  -Wvla -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith
  -Wcast-align -Wundef -Wwrite-strings -Wnull-dereference
  -Wimplicit-fallthrough -Wdouble-promotion -Werror=implicit-function-declaration
  -Werror=return-type)
if(LC_WERROR)
  list(APPEND LC_PICKY_FLAGS -Werror)
endif()
function(lc_picky target)
  target_compile_options(${target} PRIVATE ${LC_PICKY_FLAGS})
endfunction()
