// libwebp from Debian's libwebp-dev: the simple encoding API (WebPEncodeRGB/RGBA, WebPFree), the advanced decoding
// API (WebPGetFeatures, WebPDecode into a caller's buffer) and, from libwebpdemux, the animation decoder
// (WebPAnimDecoder). libwebp reports every failure by a return value: no callbacks, no longjmp.
#include <webp/encode.h>
#include <webp/decode.h>
#include <webp/demux.h>
