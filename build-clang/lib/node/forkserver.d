build-clang/lib/node/forkserver.o: lib/node/forkserver.c \
  lib/node/forkserver.h lib/node/worker.h lib/node/journal.h \
  lib/node/proto.h lib/node/wire.h include/rtask.h lib/node/procstate.h \
  lib/base/alloc.h lib/base/clock.h lib/base/process.h

lib/node/forkserver.h:

lib/node/worker.h:

lib/node/journal.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/node/procstate.h:

lib/base/alloc.h:

lib/base/clock.h:

lib/base/process.h:
