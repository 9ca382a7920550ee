// libpng 1.6, used only through the simplified png_image_* API: libpng keeps its setjmp/longjmp inside
// png_safe_execute, so no longjmp ever crosses a Swift frame.
#ifndef TILECACHE_CPNG_SHIM_H
#define TILECACHE_CPNG_SHIM_H
#include <png.h>

/// PNG_IMAGE_SIZE is a macro Swift cannot import.
static inline size_t tc_png_image_row_stride(const png_image *image) {
    return PNG_IMAGE_ROW_STRIDE(*image);
}
static inline size_t tc_png_image_buffer_size(const png_image *image) {
    return PNG_IMAGE_BUFFER_SIZE(*image, PNG_IMAGE_ROW_STRIDE(*image));
}
/// PNG_IMAGE_PNG_SIZE_MAX: an upper bound on the whole PNG stream of `image` (libpng's own, from zlib's deflateBound),
/// so that png_image_write_to_memory compresses once into a buffer this size.
static inline size_t tc_png_image_png_size_max(const png_image *image) {
    return PNG_IMAGE_PNG_SIZE_MAX(*image);
}
static inline int tc_png_image_failed(const png_image *image) {
    return PNG_IMAGE_FAILED(*image);
}
#endif
