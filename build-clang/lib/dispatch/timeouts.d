build-clang/lib/dispatch/timeouts.o: lib/dispatch/timeouts.c \
  lib/dispatch/timeouts.h lib/node/task.h lib/node/proto.h \
  lib/node/wire.h include/rtask.h lib/devices/resources.h \
  lib/base/alloc.h

lib/dispatch/timeouts.h:

lib/node/task.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/devices/resources.h:

lib/base/alloc.h:
