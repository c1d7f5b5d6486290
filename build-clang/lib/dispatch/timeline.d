build-clang/lib/dispatch/timeline.o: lib/dispatch/timeline.c \
  lib/dispatch/timeline.h lib/base/alloc.h lib/base/error.h \
  include/rtask.h

lib/dispatch/timeline.h:

lib/base/alloc.h:

lib/base/error.h:

include/rtask.h:
