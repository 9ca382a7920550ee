// libFuzzer's driver entry point (compiler-rt, LLVM 11 and later), for harnesses that supply their own `main`:
// SwiftPM links executables with `main` aliased to `<Module>_main`, so the harness defines that and calls this.
#ifndef TILECACHE_CFUZZERDRIVER_H
#define TILECACHE_CFUZZERDRIVER_H
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif
