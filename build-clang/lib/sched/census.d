build-clang/lib/sched/census.o: lib/sched/census.c lib/sched/census.h \
  lib/sched/scheduler.h lib/base/idmap.h lib/base/list.h \
  lib/devices/instance.h lib/devices/resources.h lib/node/task.h \
  lib/node/proto.h lib/node/wire.h include/rtask.h

lib/sched/census.h:

lib/sched/scheduler.h:

lib/base/idmap.h:

lib/base/list.h:

lib/devices/instance.h:

lib/devices/resources.h:

lib/node/task.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:
