build-clang/lib/devices/resources.o: lib/devices/resources.c \
  lib/devices/resources.h lib/base/error.h include/rtask.h

lib/devices/resources.h:

lib/base/error.h:

include/rtask.h:
