build-clang/lib/base/process.o: lib/base/process.c lib/base/process.h

lib/base/process.h:
