build-clang/lib/runtime/request.o: lib/runtime/request.c \
  lib/runtime/request.h include/rtask.h lib/devices/resources.h \
  lib/node/task.h lib/node/proto.h lib/node/wire.h lib/sched/scheduler.h \
  lib/base/idmap.h lib/base/list.h lib/devices/instance.h \
  lib/base/error.h lib/devices/family.h

lib/runtime/request.h:

include/rtask.h:

lib/devices/resources.h:

lib/node/task.h:

lib/node/proto.h:

lib/node/wire.h:

lib/sched/scheduler.h:

lib/base/idmap.h:

lib/base/list.h:

lib/devices/instance.h:

lib/base/error.h:

lib/devices/family.h:
