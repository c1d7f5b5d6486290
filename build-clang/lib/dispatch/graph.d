build-clang/lib/dispatch/graph.o: lib/dispatch/graph.c \
  lib/dispatch/lives.h lib/dispatch/dispatch.h lib/dispatch/actor.h \
  include/rtask.h lib/base/list.h lib/node/task.h lib/node/proto.h \
  lib/node/wire.h lib/devices/resources.h lib/sched/scheduler.h \
  lib/base/idmap.h lib/devices/instance.h lib/dispatch/graph.h \
  lib/dispatch/timeline.h lib/dispatch/timeouts.h lib/node/node.h \
  lib/sched/offer.h lib/devices/detect.h lib/devices/family.h \
  lib/base/alloc.h

lib/dispatch/lives.h:

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

lib/base/alloc.h:
