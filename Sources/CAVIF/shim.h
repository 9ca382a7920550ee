// libavif from Debian's libavif-dev (0.11): the decoder (avifDecoderParse for the header, avifDecoderNextImage for the
// AV1 payload, dav1d or libaom underneath), YUV to RGB, and the encoder (libaom, rav1e or SVT-AV1). libavif reports every
// failure by an avifResult: no callbacks, no longjmp.
#include <avif/avif.h>
