build-clang/lib/api/remote.o: lib/api/remote.c lib/base/alloc.h \
  lib/base/error.h include/rtask.h lib/base/process.h lib/base/shm.h \
  lib/runtime/calls.h lib/runtime/request.h lib/devices/resources.h \
  lib/node/task.h lib/node/proto.h lib/node/wire.h lib/sched/scheduler.h \
  lib/base/idmap.h lib/base/list.h lib/devices/instance.h \
  lib/dispatch/actor.h lib/api/args.h

lib/base/alloc.h:

lib/base/error.h:

include/rtask.h:

lib/base/process.h:

lib/base/shm.h:

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

lib/api/args.h:
