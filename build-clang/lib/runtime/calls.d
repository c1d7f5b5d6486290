build-clang/lib/runtime/calls.o: lib/runtime/calls.c lib/runtime/calls.h \
  lib/runtime/request.h include/rtask.h lib/devices/resources.h \
  lib/node/task.h lib/node/proto.h lib/node/wire.h lib/sched/scheduler.h \
  lib/base/idmap.h lib/base/list.h lib/devices/instance.h \
  lib/dispatch/actor.h lib/runtime/runtime.h lib/runtime/cluster.h \
  lib/base/loop.h lib/dispatch/dispatch.h lib/dispatch/graph.h \
  lib/dispatch/timeline.h lib/dispatch/timeouts.h lib/node/node.h \
  lib/sched/offer.h lib/devices/detect.h lib/devices/family.h \
  lib/runtime/table.h lib/node/local.h lib/node/forkserver.h \
  lib/node/worker.h lib/node/journal.h lib/cluster/image.h \
  lib/base/alloc.h lib/base/clock.h lib/base/error.h lib/base/process.h \
  lib/base/shm.h lib/sched/census.h

lib/runtime/calls.h:

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

lib/dispatch/actor.h:

lib/runtime/runtime.h:

lib/runtime/cluster.h:

lib/base/loop.h:

lib/dispatch/dispatch.h:

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

lib/base/process.h:

lib/base/shm.h:

lib/sched/census.h:
