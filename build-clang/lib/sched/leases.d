build-clang/lib/sched/leases.o: lib/sched/leases.c lib/sched/scheduler.h \
  lib/base/idmap.h lib/base/list.h lib/devices/instance.h \
  lib/devices/resources.h lib/node/task.h lib/node/proto.h \
  lib/node/wire.h include/rtask.h lib/base/alloc.h

lib/sched/scheduler.h:

lib/base/idmap.h:

lib/base/list.h:

lib/devices/instance.h:

lib/devices/resources.h:

lib/node/task.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:

lib/base/alloc.h:
