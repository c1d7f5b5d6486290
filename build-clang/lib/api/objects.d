build-clang/lib/api/objects.o: lib/api/objects.c lib/base/error.h \
  include/rtask.h lib/base/process.h lib/runtime/calls.h \
  lib/runtime/request.h lib/devices/resources.h lib/node/task.h \
  lib/node/proto.h lib/node/wire.h lib/sched/scheduler.h \
  lib/base/idmap.h lib/base/list.h lib/devices/instance.h \
  lib/dispatch/actor.h

lib/base/error.h:

include/rtask.h:

lib/base/process.h:

lib/runtime/calls.h:

lib/runtime/request.h:

lib/devices/resources.h:

lib/node/task.h:

lib/node/proto.h:

lib/node/wire.h:

lib/sched/scheduler.h:

lib/base/idmap.h:

lib/base/list.h:

lib/devices/instance.h:

lib/dispatch/actor.h:
