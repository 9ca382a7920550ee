// libavif 0.11's header from Debian's libavif-dev: the types only. The library itself is loaded on first use
// (ImageCore's AVIFLibrary, dlopen of libavif.so.15), so processes that never touch an AVIF do not load it and its AV1
// codecs. libavif reports every failure by an avifResult: no callbacks, no longjmp.
#include <avif/avif.h>
