build-clang/lib/node/wire.o: lib/node/wire.c lib/node/wire.h \
  lib/base/alloc.h

lib/node/wire.h:

lib/base/alloc.h:
