build-clang/lib/node/sink.o: lib/node/sink.c lib/node/sink.h \
  lib/base/alloc.h lib/base/clock.h lib/base/thread.h

lib/node/sink.h:

lib/base/alloc.h:

lib/base/clock.h:

lib/base/thread.h:
