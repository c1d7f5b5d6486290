build-clang/lib/devices/instance.o: lib/devices/instance.c \
  lib/devices/instance.h lib/devices/resources.h

lib/devices/instance.h:

lib/devices/resources.h:
