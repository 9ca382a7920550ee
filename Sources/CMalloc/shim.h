// glibc's malloc tuning (mallopt), which Swift's Glibc module does not expose. mallopt returns 1 on success, 0 on error.
#include <malloc.h>
