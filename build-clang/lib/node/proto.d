build-clang/lib/node/proto.o: lib/node/proto.c lib/node/proto.h \
  lib/node/wire.h include/rtask.h lib/base/alloc.h lib/base/shm.h \
  lib/devices/resources.h

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/base/alloc.h:

lib/base/shm.h:

lib/devices/resources.h:
