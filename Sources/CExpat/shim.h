// Expat from Debian's libexpat1-dev: a stream-oriented XML parser (the one Python's xml.etree uses), for the shared
// store's S3 answers. It reports elements and text through callbacks with a user-data pointer, and every failure by
// XML_Parse's return value (no longjmp).
#include <expat.h>
