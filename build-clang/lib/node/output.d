build-clang/lib/node/output.o: lib/node/output.c lib/node/output.h \
  lib/node/sink.h lib/node/worker.h lib/node/journal.h lib/node/proto.h \
  lib/node/wire.h include/rtask.h lib/base/alloc.h

lib/node/output.h:

lib/node/sink.h:

lib/node/worker.h:

lib/node/journal.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/base/alloc.h:
