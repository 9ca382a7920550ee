// libpq, PostgreSQL's own client library, from Debian's libpq-dev: connections (PQconnectdbParams, with sslmode and
// connect_timeout as libpq reads them), statements with parameters (PQexecParams) and their results. It reports every
// failure by a return value and PQerrorMessage/PQresultErrorField: no callbacks, no longjmp.
#include <libpq-fe.h>
