build-clang/lib/devices/nvml.o: lib/devices/nvml.c lib/devices/nvml.h \
  lib/devices/detect.h lib/devices/family.h lib/devices/instance.h \
  lib/devices/resources.h lib/devices/models.h lib/devices/nvml_abi.h \
  lib/base/alloc.h

lib/devices/nvml.h:

lib/devices/detect.h:

lib/devices/family.h:

lib/devices/instance.h:

lib/devices/resources.h:

lib/devices/models.h:

lib/devices/nvml_abi.h:

lib/base/alloc.h:
