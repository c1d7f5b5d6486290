build-clang/lib/devices/detect.o: lib/devices/detect.c \
  lib/devices/detect.h lib/devices/family.h lib/devices/instance.h \
  lib/devices/resources.h lib/devices/models.h lib/devices/nvml.h \
  lib/base/error.h include/rtask.h

lib/devices/detect.h:

lib/devices/family.h:

lib/devices/instance.h:

lib/devices/resources.h:

lib/devices/models.h:

lib/devices/nvml.h:

lib/base/error.h:

include/rtask.h:
