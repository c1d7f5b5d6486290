build-clang/lib/base/alloc.o: lib/base/alloc.c lib/base/alloc.h

lib/base/alloc.h:
