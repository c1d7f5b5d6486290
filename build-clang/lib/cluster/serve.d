build-clang/lib/cluster/serve.o: lib/cluster/serve.c lib/cluster/serve.h \
  lib/cluster/bridge.h lib/cluster/rankmsg.h lib/cluster/image.h \
  lib/node/node.h lib/node/proto.h lib/node/wire.h include/rtask.h \
  lib/node/task.h lib/devices/resources.h lib/base/loop.h \
  lib/base/alloc.h lib/base/error.h lib/base/idmap.h lib/base/list.h \
  lib/base/shm.h

lib/cluster/serve.h:

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

lib/base/alloc.h:

lib/base/error.h:

lib/base/idmap.h:

lib/base/list.h:

lib/base/shm.h:
