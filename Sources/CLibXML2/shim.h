// libxml2 from Debian's libxml2-dev: its HTML parser (the one lxml uses), for the images an HTML page references.
// htmlReadMemory reports failure by a NULL document (no longjmp); xmlGetLineNo gives each node's line.
//
// Debian builds libxml2 with ICU, so encoding.h would include the system's <unicode/ucnv.h>, whose enums clash with
// the copy of ICU inside Foundation (_FoundationICU) in any Swift file that imports both. The ICU members are only
// the converter fields at the end of xmlCharEncodingHandler, which Swift never reads or allocates (it uses the
// handler through pointers only, if at all), so the headers are read without them.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#include <libxml/parser.h>
