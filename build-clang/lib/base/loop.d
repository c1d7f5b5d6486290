build-clang/lib/base/loop.o: lib/base/loop.c lib/base/loop.h \
  lib/base/clock.h

lib/base/loop.h:

lib/base/clock.h:
