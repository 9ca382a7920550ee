// Little CMS 2 (Debian's liblcms2-dev): ICC profiles to sRGB for thumbnails.
#include <lcms2.h>
