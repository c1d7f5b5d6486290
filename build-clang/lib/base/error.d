build-clang/lib/base/error.o: lib/base/error.c lib/base/error.h \
  include/rtask.h

lib/base/error.h:

include/rtask.h:
