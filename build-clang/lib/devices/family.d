build-clang/lib/devices/family.o: lib/devices/family.c \
  lib/devices/family.h lib/devices/resources.h lib/base/error.h \
  include/rtask.h

lib/devices/family.h:

lib/devices/resources.h:

lib/base/error.h:

include/rtask.h:
