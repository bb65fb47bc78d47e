#include "cicu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>
#include <unicode/uchar.h>
#include <unicode/utf16.h>
#include <unicode/unorm2.h>
#include <unicode/uspoof.h>
#include <unicode/uversion.h>

// One spoof checker, configured once and then only read: ICU documents checking and
// skeletons on a configured USpoofChecker as safe from any number of threads.
static USpoofChecker *checker;
static UErrorCode checkerStatus = U_ZERO_ERROR;
static pthread_once_t checkerOnce = PTHREAD_ONCE_INIT;

static void makeChecker(void) {
    checker = uspoof_open(&checkerStatus);
    uspoof_setChecks(checker, USPOOF_RESTRICTION_LEVEL | USPOOF_INVISIBLE | USPOOF_MIXED_NUMBERS, &checkerStatus);
    uspoof_setRestrictionLevel(checker, USPOOF_HIGHLY_RESTRICTIVE);
}

static const USpoofChecker *sharedChecker(void) {
    pthread_once(&checkerOnce, makeChecker);
    return U_SUCCESS(checkerStatus) ? checker : NULL;
}

static int32_t normalize(const UNormalizer2 *normalizer, UErrorCode status, const uint16_t *source, int32_t length,
                         uint16_t *destination, int32_t capacity) {
    if (U_FAILURE(status)) return -(int32_t)status;
    int32_t needed = unorm2_normalize(normalizer, (const UChar *)source, length, (UChar *)destination, capacity, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR || status == U_STRING_NOT_TERMINATED_WARNING) return needed;
    return U_FAILURE(status) ? -(int32_t)status : needed;
}

int32_t signupd_nfc(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *normalizer = unorm2_getNFCInstance(&status);
    return normalize(normalizer, status, source, length, destination, capacity);
}

int32_t signupd_nfkc_casefold(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *normalizer = unorm2_getNFKCCasefoldInstance(&status);
    return normalize(normalizer, status, source, length, destination, capacity);
}

int32_t signupd_skeleton(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    const USpoofChecker *sc = sharedChecker();
    if (sc == NULL) return -(int32_t)checkerStatus;
    UErrorCode status = U_ZERO_ERROR;
    int32_t needed = uspoof_getSkeleton(sc, 0, (const UChar *)source, length, (UChar *)destination, capacity, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR || status == U_STRING_NOT_TERMINATED_WARNING) return needed;
    return U_FAILURE(status) ? -(int32_t)status : needed;
}

int32_t signupd_spoof_check(const uint16_t *source, int32_t length) {
    const USpoofChecker *sc = sharedChecker();
    if (sc == NULL) return -(int32_t)checkerStatus;
    UErrorCode status = U_ZERO_ERROR;
    int32_t result = uspoof_check2(sc, (const UChar *)source, length, NULL, &status);
    if (U_FAILURE(status)) return -(int32_t)status;
    return result & (USPOOF_RESTRICTION_LEVEL | USPOOF_INVISIBLE | USPOOF_MIXED_NUMBERS);
}

void signupd_unicode_version(uint8_t version[4]) {
    u_getUnicodeVersion(version);
}

void signupd_icu_version(uint8_t version[4]) {
    u_getVersion(version);
}

int32_t signupd_to_upper(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t needed = u_strToUpper((UChar *)destination, capacity, (const UChar *)source, length, "", &status);
    if (status == U_BUFFER_OVERFLOW_ERROR || status == U_STRING_NOT_TERMINATED_WARNING) return needed;
    return U_FAILURE(status) ? -(int32_t)status : needed;
}

int32_t signupd_to_lower(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t needed = u_strToLower((UChar *)destination, capacity, (const UChar *)source, length, "", &status);
    if (status == U_BUFFER_OVERFLOW_ERROR || status == U_STRING_NOT_TERMINATED_WARNING) return needed;
    return U_FAILURE(status) ? -(int32_t)status : needed;
}

// "LATIN LETTER SMALL CAPITAL A" -> LATIN CAPITAL LETTER A, for any script; else c.
static UChar32 capitalOfSmallCapital(UChar32 c) {
    char name[128];
    UErrorCode status = U_ZERO_ERROR;
    int32_t length = u_charName(c, U_UNICODE_CHAR_NAME, name, sizeof name, &status);
    if (U_FAILURE(status) || length <= 0 || length >= (int32_t)sizeof name) return c;
    const char *marker = strstr(name, " LETTER SMALL CAPITAL ");
    if (marker == NULL) return c;
    char capital[160];
    snprintf(capital, sizeof capital, "%.*s CAPITAL LETTER %s", (int)(marker - name), name, marker + strlen(" LETTER SMALL CAPITAL "));
    UChar32 mapped = u_charFromName(U_UNICODE_CHAR_NAME, capital, &status);
    return U_SUCCESS(status) ? mapped : c;
}

int32_t signupd_strip_diacritics(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *nfd = unorm2_getNFDInstance(&status);
    if (U_FAILURE(status)) return -(int32_t)status;
    int32_t decomposedLength = unorm2_normalize(nfd, (const UChar *)source, length, NULL, 0, &status);
    if (status != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(status)) return -(int32_t)status;
    status = U_ZERO_ERROR;
    UChar *decomposed = malloc(sizeof(UChar) * (size_t)(decomposedLength + 1));
    if (decomposed == NULL) return -(int32_t)U_MEMORY_ALLOCATION_ERROR;
    unorm2_normalize(nfd, (const UChar *)source, length, decomposed, decomposedLength + 1, &status);
    if (U_FAILURE(status)) {
        free(decomposed);
        return -(int32_t)status;
    }
    int32_t written = 0;
    for (int32_t i = 0; i < decomposedLength;) {
        UChar32 c;
        int32_t start = i;
        U16_NEXT(decomposed, i, decomposedLength, c);
        int8_t type = u_charType(c);
        if ((type == U_NON_SPACING_MARK || type == U_ENCLOSING_MARK) && uscript_getScript(c, &status) == USCRIPT_INHERITED) continue;
        UChar32 mapped = type == U_LOWERCASE_LETTER && c > 0x7F ? capitalOfSmallCapital(c) : c;  // no ASCII small capital
        if (mapped == c) {
            for (int32_t j = start; j < i; j++) {
                if (written < capacity) destination[written] = decomposed[j];
                written++;
            }
        } else {
            UChar units[2];
            int32_t count = 0;
            UBool error = false;
            U16_APPEND(units, count, 2, mapped, error);
            for (int32_t j = 0; j < count && !error; j++) {
                if (written < capacity) destination[written] = units[j];
                written++;
            }
        }
    }
    free(decomposed);
    return U_FAILURE(status) ? -(int32_t)status : written;
}

static int isLetter(int8_t type) {
    return type == U_UPPERCASE_LETTER || type == U_LOWERCASE_LETTER || type == U_TITLECASE_LETTER || type == U_OTHER_LETTER;
}

// RFC 5893 section 2, rules 1-6, for a name that has right-to-left characters.
static int passesBidiRule(const uint16_t *source, int32_t length) {
    int first = 1, rtl = 0, hasEN = 0, hasAN = 0;
    UCharDirection last = U_LEFT_TO_RIGHT;
    for (int32_t i = 0; i < length;) {
        UChar32 c;
        U16_NEXT(source, i, length, c);
        UCharDirection d = u_charDirection(c);
        if (first) {
            if (d == U_RIGHT_TO_LEFT || d == U_RIGHT_TO_LEFT_ARABIC) rtl = 1;
            else if (d != U_LEFT_TO_RIGHT) return 0;
            first = 0;
        }
        switch (d) {
        case U_EUROPEAN_NUMBER: hasEN = 1; break;
        case U_ARABIC_NUMBER: hasAN = 1; break;
        case U_EUROPEAN_NUMBER_SEPARATOR: case U_COMMON_NUMBER_SEPARATOR: case U_EUROPEAN_NUMBER_TERMINATOR:
        case U_OTHER_NEUTRAL: case U_BOUNDARY_NEUTRAL: case U_DIR_NON_SPACING_MARK:
            break;
        case U_LEFT_TO_RIGHT:
            if (rtl) return 0;
            break;
        case U_RIGHT_TO_LEFT: case U_RIGHT_TO_LEFT_ARABIC:
            if (!rtl) return 0;
            break;
        default:
            return 0;
        }
        if (d == U_ARABIC_NUMBER && !rtl) return 0;
        if (d != U_DIR_NON_SPACING_MARK) last = d;
    }
    if (rtl) {
        if (hasEN && hasAN) return 0;
        return last == U_RIGHT_TO_LEFT || last == U_RIGHT_TO_LEFT_ARABIC || last == U_EUROPEAN_NUMBER || last == U_ARABIC_NUMBER;
    }
    return last == U_LEFT_TO_RIGHT || last == U_EUROPEAN_NUMBER;
}

int32_t signupd_classify(const uint16_t *source, int32_t length) {
    int32_t result = 0;
    int hasLetter = 0;
    UScriptCode base = USCRIPT_INVALID_CODE;
    for (int32_t i = 0; i < length;) {
        UChar32 c;
        U16_NEXT(source, i, length, c);
        if (U_IS_SURROGATE(c)) return -1;
        if (u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT)) return SIGNUPD_CLASS_INVISIBLE;
        UErrorCode status = U_ZERO_ERROR;
        int8_t type = u_charType(c);
        if (c == 0x0640) {
            result = SIGNUPD_CLASS_INVALID;  // Arabic tatweel: stretches the joining line, no letter
        } else if (isLetter(type) || type == U_MODIFIER_LETTER) {
            if (type != U_MODIFIER_LETTER) hasLetter = 1;
            base = uscript_getScript(c, &status);
        } else if (type == U_DECIMAL_DIGIT_NUMBER) {
            hasLetter = 1;
            base = USCRIPT_INVALID_CODE;  // no mark on a digit
        } else if (type == U_NON_SPACING_MARK || type == U_COMBINING_SPACING_MARK) {
            UScriptCode script = uscript_getScript(c, &status);
            int sameScript = script == USCRIPT_INHERITED || script == USCRIPT_COMMON || uscript_hasScript(c, base);
            if (base == USCRIPT_INVALID_CODE || !sameScript) result = SIGNUPD_CLASS_INVALID;
        } else {
            result = SIGNUPD_CLASS_INVALID;
        }
    }
    if (result != 0) return result;
    if (!hasLetter) return SIGNUPD_CLASS_NO_LETTER;
    return 0;
}

int32_t signupd_bidi_rule(const uint16_t *source, int32_t length) {
    int hasRTL = 0;
    for (int32_t i = 0; i < length;) {
        UChar32 c;
        U16_NEXT(source, i, length, c);
        UCharDirection d = u_charDirection(c);
        if (d == U_RIGHT_TO_LEFT || d == U_RIGHT_TO_LEFT_ARABIC || d == U_ARABIC_NUMBER) hasRTL = 1;
    }
    return !hasRTL || passesBidiRule(source, length);
}

int32_t signupd_script(int32_t c) {
    UErrorCode status = U_ZERO_ERROR;
    UScriptCode script = uscript_getScript(c, &status);
    return U_SUCCESS(status) ? (int32_t)script : -1;
}

int32_t signupd_has_script(int32_t c, int32_t script) {
    return uscript_hasScript(c, (UScriptCode)script) ? 1 : 0;
}

int32_t signupd_bidi_class(int32_t c) {
    return (int32_t)u_charDirection(c);
}
