build-clang/lib/node/spares.o: lib/node/spares.c lib/node/spares.h

lib/node/spares.h:
