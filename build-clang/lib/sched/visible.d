build-clang/lib/sched/visible.o: lib/sched/visible.c lib/sched/visible.h \
  lib/devices/instance.h lib/devices/resources.h

lib/sched/visible.h:

lib/devices/instance.h:

lib/devices/resources.h:
