build-clang/lib/node/task.o: lib/node/task.c lib/node/task.h \
  lib/node/proto.h lib/node/wire.h include/rtask.h \
  lib/devices/resources.h lib/base/alloc.h lib/base/error.h \
  lib/base/shm.h

lib/node/task.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/devices/resources.h:

lib/base/alloc.h:

lib/base/error.h:

lib/base/shm.h:
