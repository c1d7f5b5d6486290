build-clang/lib/node/local.o: lib/node/local.c lib/node/local.h \
  lib/node/forkserver.h lib/node/worker.h lib/node/journal.h \
  lib/node/proto.h lib/node/wire.h include/rtask.h lib/node/node.h \
  lib/node/task.h lib/devices/resources.h lib/base/loop.h \
  lib/devices/family.h lib/node/workers.h lib/node/output.h \
  lib/node/spares.h lib/base/list.h lib/base/alloc.h lib/base/clock.h \
  lib/base/error.h lib/base/shm.h

lib/node/local.h:

lib/node/forkserver.h:

lib/node/worker.h:

lib/node/journal.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/node/node.h:

lib/node/task.h:

lib/devices/resources.h:

lib/base/loop.h:

lib/devices/family.h:

lib/node/workers.h:

lib/node/output.h:

lib/node/spares.h:

lib/base/list.h:

lib/base/alloc.h:

lib/base/clock.h:

lib/base/error.h:

lib/base/shm.h:
