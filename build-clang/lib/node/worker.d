build-clang/lib/node/worker.o: lib/node/worker.c lib/node/worker.h \
  lib/node/journal.h lib/node/proto.h lib/node/wire.h include/rtask.h \
  lib/node/procstate.h lib/base/alloc.h lib/base/clock.h \
  lib/base/error.h lib/base/process.h lib/base/shm.h lib/base/thread.h \
  lib/devices/detect.h lib/devices/family.h lib/devices/instance.h \
  lib/devices/resources.h

lib/node/worker.h:

lib/node/journal.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/node/procstate.h:

lib/base/alloc.h:

lib/base/clock.h:

lib/base/error.h:

lib/base/process.h:

lib/base/shm.h:

lib/base/thread.h:

lib/devices/detect.h:

lib/devices/family.h:

lib/devices/instance.h:

lib/devices/resources.h:
