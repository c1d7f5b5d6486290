build-clang/lib/base/shm.o: lib/base/shm.c lib/base/shm.h \
  lib/base/alloc.h include/rtask.h

lib/base/shm.h:

lib/base/alloc.h:

include/rtask.h:
