#ifndef SIGNUPD_PHONE_H
#define SIGNUPD_PHONE_H
/* A C interface to the part of Google's libphonenumber (C++) that signupd uses: parse a
   number as a person typed it, with a default region, say whether it can exist, and give
   its E.164 form. The text passed in is ASCII: signupd maps other digits and punctuation
   first (PhoneNumberText). */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SIGNUPD_PHONE_OK = 0,
    /* Too few digits for any number of the region (or of the country code given). */
    SIGNUPD_PHONE_TOO_SHORT = 1,
    /* More digits than any number of the region has. */
    SIGNUPD_PHONE_TOO_LONG = 2,
    /* A country calling code that does not exist, or no region and no +. */
    SIGNUPD_PHONE_INVALID_COUNTRY = 3,
    /* A length no number has, or digits no number of the region starts with. */
    SIGNUPD_PHONE_IMPOSSIBLE = 4,
    /* A number that exists but is neither a mobile nor a fixed line (toll-free, premium…). */
    SIGNUPD_PHONE_WRONG_TYPE = 5,
    /* Not a phone number at all. */
    SIGNUPD_PHONE_NOT_A_NUMBER = 6
} signupd_phone_status;

/* Parses `text` (NUL-terminated ASCII) with `region` (ISO 3166 alpha-2, or "ZZ" for none).
   On SIGNUPD_PHONE_OK, writes the E.164 form ("+8613800138000") into `e164` (at least 20
   bytes). Whenever the text could be read as a number, sets `*national_digits` to its
   national significant number's length and `*in_region` to whether its country calling
   code is the region's (else leaves them). */
signupd_phone_status signupd_phone_parse(const char *text, const char *region, char *e164, size_t e164_size, int *national_digits, int *in_region);

/* Whether libphonenumber knows `region` (ISO 3166 alpha-2). */
int signupd_phone_region_is_known(const char *region);

#ifdef __cplusplus
}
#endif
#endif
