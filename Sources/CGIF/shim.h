// giflib from Debian's libgif-dev: the low-level decoding API (DGifOpen over a read callback of ours,
// DGifGetRecordType, DGifGetImageDesc, DGifGetLine, DGifGetExtension), so every frame is decoded a row at a time into
// buffers of ours and bounded before any allocation. giflib reports every failure by a return value and an error code:
// no callbacks that jump, no global state.
#include <gif_lib.h>
