#include "cicu.h"

#include <pthread.h>
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

int32_t signupd_classify(const uint16_t *source, int32_t length, int allowMarks) {
    int32_t result = 0;
    for (int32_t i = 0; i < length;) {
        UChar32 c;
        U16_NEXT(source, i, length, c);
        if (U_IS_SURROGATE(c)) return -1;
        if (u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT)) return 1;
        switch (u_charType(c)) {
        case U_UPPERCASE_LETTER: case U_LOWERCASE_LETTER: case U_TITLECASE_LETTER: case U_MODIFIER_LETTER:
        case U_OTHER_LETTER: case U_DECIMAL_DIGIT_NUMBER:
            break;
        case U_NON_SPACING_MARK: case U_COMBINING_SPACING_MARK: case U_ENCLOSING_MARK:
            if (!allowMarks) result = 2;
            break;
        default:
            result = 2;
        }
    }
    return result;
}
