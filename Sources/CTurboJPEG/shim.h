// TurboJPEG 2.1 (Debian 12): the tj* API. It handles libjpeg's longjmp internally, so no setjmp crosses Swift.
#ifndef TILECACHE_CTURBOJPEG_SHIM_H
#define TILECACHE_CTURBOJPEG_SHIM_H
#include <turbojpeg.h>
#endif
