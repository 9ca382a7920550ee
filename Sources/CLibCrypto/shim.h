// OpenSSL's libcrypto from Debian's libssl-dev (libcurl already loads it): one-shot SHA-1, SHA-256 and HMAC, and
// CRYPTO_memcmp, the constant-time comparison. Each reports failure by its return value (NULL, 0).
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
