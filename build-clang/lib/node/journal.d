build-clang/lib/node/journal.o: lib/node/journal.c lib/node/journal.h \
  lib/node/proto.h lib/node/wire.h include/rtask.h

lib/node/journal.h:

lib/node/proto.h:

lib/node/wire.h:

include/rtask.h:
