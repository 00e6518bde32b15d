# Picky warnings, applied per target with lc_picky(target).
set(LC_PICKY_FLAGS
  -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion -Wformat=2
  -Wvla -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith
  -Wcast-align -Wundef -Wwrite-strings -Wnull-dereference
  -Wimplicit-fallthrough -Wdouble-promotion -Werror=implicit-function-declaration
  -Werror=return-type)
function(lc_picky target)
  target_compile_options(${target} PRIVATE ${LC_PICKY_FLAGS})
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
endfunction()
