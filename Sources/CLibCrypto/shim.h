// OpenSSL's libcrypto from Debian's libssl-dev (libcurl already loads it): one-shot SHA-256 and HMAC (with EVP_sha256
// and EVP_sha1), for `Hashing`. Each reports failure by its return value (NULL).
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
