build-clang/lib/node/procstate.o: lib/node/procstate.c \
  lib/node/procstate.h lib/base/clock.h

lib/node/procstate.h:

lib/base/clock.h:
