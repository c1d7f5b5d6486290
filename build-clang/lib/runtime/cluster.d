build-clang/lib/runtime/cluster.o: lib/runtime/cluster.c \
  lib/runtime/cluster.h include/rtask.h lib/base/loop.h \
  lib/dispatch/dispatch.h lib/dispatch/actor.h lib/base/list.h \
  lib/node/task.h lib/node/proto.h lib/node/wire.h \
  lib/devices/resources.h lib/sched/scheduler.h lib/base/idmap.h \
  lib/devices/instance.h lib/dispatch/graph.h lib/dispatch/timeline.h \
  lib/dispatch/timeouts.h lib/node/node.h lib/sched/offer.h \
  lib/devices/detect.h lib/devices/family.h lib/base/alloc.h \
  lib/base/error.h lib/cluster/bridge.h lib/cluster/rankmsg.h \
  lib/cluster/image.h lib/cluster/peer.h lib/cluster/serve.h \
  lib/node/output.h

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

lib/base/alloc.h:

lib/base/error.h:

lib/cluster/bridge.h:

lib/cluster/rankmsg.h:

lib/cluster/image.h:

lib/cluster/peer.h:

lib/cluster/serve.h:

lib/node/output.h:
