build-clang/lib/cluster/rankmsg.o: lib/cluster/rankmsg.c \
  lib/cluster/rankmsg.h lib/cluster/image.h lib/node/node.h \
  lib/node/proto.h lib/node/wire.h include/rtask.h lib/node/task.h \
  lib/devices/resources.h lib/base/alloc.h lib/base/shm.h

lib/cluster/rankmsg.h:

lib/cluster/image.h:

lib/node/node.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/node/task.h:

lib/devices/resources.h:

lib/base/alloc.h:

lib/base/shm.h:
