build-clang/lib/cluster/image.o: lib/cluster/image.c lib/cluster/image.h

lib/cluster/image.h:
