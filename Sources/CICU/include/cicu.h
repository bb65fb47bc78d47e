// The few ICU calls signupd needs, under unversioned names Swift can import. Debian's ICU
// exports versioned symbols (uspoof_open_72, ...) that its headers reach through macros,
// which Swift cannot call; this shim is compiled as C, where the macros work.
#ifndef SIGNUPD_CICU_H
#define SIGNUPD_CICU_H

#include <stdint.h>

/// Outcomes of the spoof check, a bitmask (the ICU USpoofChecks bits we ask for).
enum {
    SIGNUPD_SPOOF_RESTRICTION_LEVEL = 16,
    SIGNUPD_SPOOF_INVISIBLE = 32,
    SIGNUPD_SPOOF_MIXED_NUMBERS = 128,
};

/// NFC of UTF-16 `source` into `destination`. Returns the length needed; a negative value
/// is an ICU error. When the result is longer than `capacity`, nothing useful is written
/// and the needed length is returned.
int32_t signupd_nfc(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity);

/// NFKC_Casefold (Unicode's NFKC_CF mapping) of `source`; same conventions as signupd_nfc.
int32_t signupd_nfkc_casefold(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity);

/// The UTS #39 confusable skeleton of `source`; same conventions as signupd_nfc.
int32_t signupd_skeleton(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity);

/// The UTS #39 checks signupd applies (restriction level "highly restrictive", invisible
/// characters, mixed number systems): 0 when `source` passes, else the failed check bits,
/// negative on an ICU error.
int32_t signupd_spoof_check(const uint16_t *source, int32_t length);

/// What a username's characters are: 0 when every code point is a letter (Lu Ll Lt Lm Lo)
/// or a decimal digit (Nd); 1 when any is Default_Ignorable_Code_Point (invisible: Hangul
/// fillers, zero-width characters, bidi controls, variation selectors, ...); else 2.
/// With `allowMarks`, combining marks (Mn Mc Me) count as letters too (for NFKC_Casefold
/// keys: the key of İ is i + U+0307). Properties from the linked ICU's Unicode version.
/// Negative for ill-formed UTF-16.
int32_t signupd_classify(const uint16_t *source, int32_t length, int allowMarks);

/// The Unicode version of the linked ICU (e.g. 15.0) and ICU's own (e.g. 72.1).
void signupd_unicode_version(uint8_t version[4]);
void signupd_icu_version(uint8_t version[4]);

#endif
