build-clang/lib/sched/offer.o: lib/sched/offer.c lib/sched/offer.h \
  include/rtask.h lib/devices/detect.h lib/devices/family.h \
  lib/devices/instance.h lib/devices/resources.h lib/sched/scheduler.h \
  lib/base/idmap.h lib/base/list.h lib/node/task.h lib/node/proto.h \
  lib/node/wire.h lib/sched/visible.h lib/base/error.h

lib/sched/offer.h:

include/rtask.h:

lib/devices/detect.h:

lib/devices/family.h:

lib/devices/instance.h:

lib/devices/resources.h:

lib/sched/scheduler.h:

lib/base/idmap.h:

lib/base/list.h:

lib/node/task.h:

lib/node/proto.h:

lib/node/wire.h:

lib/sched/visible.h:

lib/base/error.h:
