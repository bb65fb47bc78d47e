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

/// Outcomes of signupd_classify.
enum {
    SIGNUPD_CLASS_OK = 0,
    SIGNUPD_CLASS_INVISIBLE = 1,
    SIGNUPD_CLASS_INVALID = 2,
    SIGNUPD_CLASS_NO_LETTER = 3,
};

/// What a username's characters are, checked in this order:
/// - SIGNUPD_CLASS_INVISIBLE when any code point is Default_Ignorable_Code_Point (Hangul
///   fillers, zero-width characters, bidi controls, variation selectors, ...);
/// - SIGNUPD_CLASS_INVALID when a code point is not a letter (Lu Ll Lt Lm Lo), a decimal
///   digit (Nd), or a combining mark (Mn Mc) following a letter whose script it belongs
///   to (or a mark of script Inherited or Common); U+0640 ARABIC TATWEEL is invalid;
/// - SIGNUPD_CLASS_NO_LETTER when no code point is Lu Ll Lt Lo or Nd (modifier letters only).
/// Properties from the linked ICU's Unicode version. Negative for ill-formed UTF-16.
int32_t signupd_classify(const uint16_t *source, int32_t length);

/// 1 when `source` has no right-to-left character (bidi class R, AL or AN) or passes the
/// RFC 5893 Bidi Rule (rules 1 to 6, as IDNA applies them), else 0.
int32_t signupd_bidi_rule(const uint16_t *source, int32_t length);

/// Full uppercase and lowercase mappings (root locale); same conventions as signupd_nfc.
int32_t signupd_to_upper(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity);
int32_t signupd_to_lower(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity);

/// NFD of `source` without its nonspacing and enclosing marks of script Inherited (the
/// general diacritics U+0300..., not the vowel signs of Indic or Thai scripts), and with
/// small capitals ("LATIN LETTER SMALL CAPITAL A", any script) replaced by their capital
/// letters, which UTS #39's skeleton does not do; same conventions as signupd_nfc.
int32_t signupd_strip_diacritics(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity);

/// For clients of describe's rules (the tests): the Script property of a code point (an
/// ICU UScriptCode; 0 Common, 1 Inherited), whether its Script_Extensions contain a
/// script, and its Bidi_Class (an ICU UCharDirection: 0 L, 1 R, 2 EN, 3 ES, 4 ET, 5 AN,
/// 6 CS, 7 B, 8 S, 9 WS, 10 ON, 13 AL, 17 NSM, 18 BN, others controls).
int32_t signupd_script(int32_t c);
int32_t signupd_has_script(int32_t c, int32_t script);
int32_t signupd_bidi_class(int32_t c);

/// The Unicode version of the ICU signupd was built against (e.g. 15.0), known without
/// opening it (the library opened must agree, `signupd_icu_load`), and ICU's own version
/// (e.g. 72.1; zeros if it cannot be opened).
void signupd_unicode_version(uint8_t version[4]);
void signupd_icu_version(uint8_t version[4]);
/// The opened ICU's Unicode version (zeros if it cannot be opened).
void signupd_icu_unicode_version(uint8_t version[4]);

/// Opens ICU (libicui18n of the headers' major version) once for the process: 1 when it is
/// usable, 0 when not, and then every function above fails (a negative length, a class of
/// -1, the Bidi Rule not passed). Called at first use, or earlier to take the cost off a request.
int32_t signupd_icu_load(void);

/// Why ICU cannot be used (after `signupd_icu_load` said 0), or NULL when it can.
const char *signupd_icu_error(void);

#endif
