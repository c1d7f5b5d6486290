build-clang/lib/dispatch/dispatch.o: lib/dispatch/dispatch.c \
  lib/dispatch/dispatch.h lib/dispatch/actor.h include/rtask.h \
  lib/base/list.h lib/node/task.h lib/node/proto.h lib/node/wire.h \
  lib/devices/resources.h lib/sched/scheduler.h lib/base/idmap.h \
  lib/devices/instance.h lib/dispatch/graph.h lib/dispatch/timeline.h \
  lib/dispatch/timeouts.h lib/node/node.h lib/sched/offer.h \
  lib/devices/detect.h lib/devices/family.h lib/dispatch/lives.h \
  lib/base/alloc.h lib/base/clock.h lib/base/error.h lib/base/shm.h

lib/dispatch/dispatch.h:

lib/dispatch/actor.h:

include/rtask.h:

lib/base/list.h:

lib/node/task.h:

lib/node/proto.h:

lib/node/wire.h:

lib/devices/resources.h:

lib/sched/scheduler.h:

lib/base/idmap.h:

lib/devices/instance.h:

lib/dispatch/graph.h:

lib/dispatch/timeline.h:

lib/dispatch/timeouts.h:

lib/node/node.h:

lib/sched/offer.h:

lib/devices/detect.h:

lib/devices/family.h:

lib/dispatch/lives.h:

lib/base/alloc.h:

lib/base/clock.h:

lib/base/error.h:

lib/base/shm.h:
