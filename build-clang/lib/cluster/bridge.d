build-clang/lib/cluster/bridge.o: lib/cluster/bridge.c \
  lib/cluster/bridge.h lib/cluster/rankmsg.h lib/cluster/image.h \
  lib/node/node.h lib/node/proto.h lib/node/wire.h include/rtask.h \
  lib/node/task.h lib/devices/resources.h lib/base/loop.h \
  lib/cluster/mpi_thread.h lib/cluster/mpi_ops.h lib/base/alloc.h \
  lib/base/clock.h lib/base/error.h lib/base/list.h lib/base/shm.h \
  lib/base/thread.h

lib/cluster/bridge.h:

lib/cluster/rankmsg.h:

lib/cluster/image.h:

lib/node/node.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/node/task.h:

lib/devices/resources.h:

lib/base/loop.h:

lib/cluster/mpi_thread.h:

lib/cluster/mpi_ops.h:

lib/base/alloc.h:

lib/base/clock.h:

lib/base/error.h:

lib/base/list.h:

lib/base/shm.h:

lib/base/thread.h:
