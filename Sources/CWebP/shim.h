// libwebp's simple encoding API (WebPEncodeRGB/RGBA, WebPFree), from Debian's libwebp-dev.
#include <webp/encode.h>
