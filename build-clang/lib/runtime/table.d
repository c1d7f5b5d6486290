build-clang/lib/runtime/table.o: lib/runtime/table.c lib/runtime/table.h \
  lib/base/alloc.h

lib/runtime/table.h:

lib/base/alloc.h:
