build-clang/lib/devices/models.o: lib/devices/models.c \
  lib/devices/models.h

lib/devices/models.h:
