// cmark from Debian's libcmark-dev (0.30.2): the CommonMark reference parser, for the images a Markdown document
// references. With CMARK_OPT_SOURCEPOS every block and inline node carries its line; reference-style images come back
// resolved. Failure is a NULL node (no longjmp).
#include <cmark.h>
