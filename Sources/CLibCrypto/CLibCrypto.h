// OpenSSL's libcrypto, the calls MirrorStore's encryption uses on Linux: the EVP AES-256-GCM
// cipher, PKCS5_PBKDF2_HMAC, RAND_bytes, OPENSSL_cleanse and the error queue.
// Headers only: every cipher, MAC and KDF is libcrypto's own (libssl-dev on Debian and Ubuntu).
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
