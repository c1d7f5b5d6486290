build-clang/lib/runtime/round.o: lib/runtime/round.c \
  lib/runtime/runtime.h lib/runtime/cluster.h include/rtask.h \
  lib/base/loop.h lib/dispatch/dispatch.h lib/dispatch/actor.h \
  lib/base/list.h lib/node/task.h lib/node/proto.h lib/node/wire.h \
  lib/devices/resources.h lib/sched/scheduler.h lib/base/idmap.h \
  lib/devices/instance.h lib/dispatch/graph.h lib/dispatch/timeline.h \
  lib/dispatch/timeouts.h lib/node/node.h lib/sched/offer.h \
  lib/devices/detect.h lib/devices/family.h lib/runtime/table.h \
  lib/node/local.h lib/node/forkserver.h lib/node/worker.h \
  lib/node/journal.h lib/cluster/image.h lib/base/alloc.h \
  lib/base/clock.h lib/base/error.h lib/node/sink.h

lib/runtime/runtime.h:

lib/runtime/cluster.h:

include/rtask.h:

lib/base/loop.h:

lib/dispatch/dispatch.h:

lib/dispatch/actor.h:

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

lib/runtime/table.h:

lib/node/local.h:

lib/node/forkserver.h:

lib/node/worker.h:

lib/node/journal.h:

lib/cluster/image.h:

lib/base/alloc.h:

lib/base/clock.h:

lib/base/error.h:

lib/node/sink.h:
