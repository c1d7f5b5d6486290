build-clang/lib/sched/scheduler.o: lib/sched/scheduler.c \
  lib/sched/scheduler.h lib/base/idmap.h lib/base/list.h \
  lib/devices/instance.h lib/devices/resources.h lib/node/task.h \
  lib/node/proto.h lib/node/wire.h include/rtask.h lib/base/alloc.h \
  lib/base/error.h lib/devices/family.h

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

lib/base/error.h:

lib/devices/family.h:
