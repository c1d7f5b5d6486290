build-clang/lib/base/idmap.o: lib/base/idmap.c lib/base/idmap.h \
  lib/base/alloc.h

lib/base/idmap.h:

lib/base/alloc.h:
