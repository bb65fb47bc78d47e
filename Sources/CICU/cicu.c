#include "cicu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/unorm2.h>
#include <unicode/uspoof.h>
#include <unicode/uversion.h>

// ICU is opened at first use, not linked: mapping and relocating libicuuc and libicui18n
// at every exec cost about 0.7 ms of a socket-activated start whose first `hello` needs
// no ICU (issue 29). The daemon opens it in the background once serving
// (`signupd_icu_load`); a name checked before that opens it then. The library is the one
// of the headers' major version, whose symbols carry that version (uspoof_open_72...):
// the headers' macros give the names, stringified after expansion.
#define ICU_FUNCTIONS(X)                                                                   \
    X(u_charDirection) X(u_charFromName) X(u_charName) X(u_charType) X(u_getUnicodeVersion) \
    X(u_getVersion) X(u_hasBinaryProperty) X(u_strToLower) X(u_strToUpper)                 \
    X(unorm2_getNFCInstance) X(unorm2_getNFDInstance) X(unorm2_getNFKCCasefoldInstance)     \
    X(unorm2_normalize) X(uscript_getScript) X(uscript_hasScript) X(uspoof_check2)          \
    X(uspoof_getSkeleton) X(uspoof_open) X(uspoof_setChecks) X(uspoof_setRestrictionLevel)

#define ICU_NAME_(name) #name
#define ICU_NAME(name) ICU_NAME_(name)
#define ICU_LIBRARY "libicui18n.so." ICU_NAME(U_ICU_VERSION_MAJOR_NUM)

#define ICU_POINTER(name) static __typeof__(&name) icu_##name;
ICU_FUNCTIONS(ICU_POINTER)

static int icuLoaded;
static char icuError[512];
static pthread_once_t icuOnce = PTHREAD_ONCE_INIT;

static void loadICU(void) {
    void *library = dlopen(ICU_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(icuError, sizeof icuError, "cannot open %s: %s", ICU_LIBRARY, why ? why : "unknown error");
        return;
    }
#define ICU_RESOLVE(name)                                                                                      \
    icu_##name = (__typeof__(icu_##name))dlsym(library, ICU_NAME(name));                                       \
    if (icu_##name == NULL) {                                                                                  \
        snprintf(icuError, sizeof icuError, "%s has no %s", ICU_LIBRARY, ICU_NAME(name));                      \
        return;                                                                                                \
    }
    ICU_FUNCTIONS(ICU_RESOLVE)
    // The Unicode version signupd reports without opening ICU (`signupd_unicode_version`,
    // part of the stored identity keys' version) must be the library's.
    UVersionInfo unicode;
    uint8_t expected[4];
    icu_u_getUnicodeVersion(unicode);
    signupd_unicode_version(expected);
    if (unicode[0] != expected[0] || unicode[1] != expected[1]) {
        snprintf(icuError, sizeof icuError, "%s implements Unicode %d.%d, signupd was built for Unicode %s", ICU_LIBRARY,
                 unicode[0], unicode[1], U_UNICODE_VERSION);
        return;
    }
    icuLoaded = 1;
}

int32_t signupd_icu_load(void) {
    pthread_once(&icuOnce, loadICU);
    return icuLoaded;
}

const char *signupd_icu_error(void) {
    signupd_icu_load();
    return icuLoaded ? NULL : icuError;
}

// From here on, each ICU call goes through its pointer, once `signupd_icu_load` said yes.
#define ICU_MISSING (-(int32_t)U_MISSING_RESOURCE_ERROR)
#undef u_charDirection
#define u_charDirection (*icu_u_charDirection)
#undef u_charFromName
#define u_charFromName (*icu_u_charFromName)
#undef u_charName
#define u_charName (*icu_u_charName)
#undef u_charType
#define u_charType (*icu_u_charType)
#undef u_getVersion
#define u_getVersion (*icu_u_getVersion)
#undef u_hasBinaryProperty
#define u_hasBinaryProperty (*icu_u_hasBinaryProperty)
#undef u_strToLower
#define u_strToLower (*icu_u_strToLower)
#undef u_strToUpper
#define u_strToUpper (*icu_u_strToUpper)
#undef unorm2_getNFCInstance
#define unorm2_getNFCInstance (*icu_unorm2_getNFCInstance)
#undef unorm2_getNFDInstance
#define unorm2_getNFDInstance (*icu_unorm2_getNFDInstance)
#undef unorm2_getNFKCCasefoldInstance
#define unorm2_getNFKCCasefoldInstance (*icu_unorm2_getNFKCCasefoldInstance)
#undef unorm2_normalize
#define unorm2_normalize (*icu_unorm2_normalize)
#undef uscript_getScript
#define uscript_getScript (*icu_uscript_getScript)
#undef uscript_hasScript
#define uscript_hasScript (*icu_uscript_hasScript)
#undef uspoof_check2
#define uspoof_check2 (*icu_uspoof_check2)
#undef uspoof_getSkeleton
#define uspoof_getSkeleton (*icu_uspoof_getSkeleton)
#undef uspoof_open
#define uspoof_open (*icu_uspoof_open)
#undef uspoof_setChecks
#define uspoof_setChecks (*icu_uspoof_setChecks)
#undef uspoof_setRestrictionLevel
#define uspoof_setRestrictionLevel (*icu_uspoof_setRestrictionLevel)

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
    if (!signupd_icu_load()) return ICU_MISSING;
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *normalizer = unorm2_getNFCInstance(&status);
    return normalize(normalizer, status, source, length, destination, capacity);
}

int32_t signupd_nfkc_casefold(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    if (!signupd_icu_load()) return ICU_MISSING;
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *normalizer = unorm2_getNFKCCasefoldInstance(&status);
    return normalize(normalizer, status, source, length, destination, capacity);
}

int32_t signupd_skeleton(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    if (!signupd_icu_load()) return ICU_MISSING;
    const USpoofChecker *sc = sharedChecker();
    if (sc == NULL) return -(int32_t)checkerStatus;
    UErrorCode status = U_ZERO_ERROR;
    int32_t needed = uspoof_getSkeleton(sc, 0, (const UChar *)source, length, (UChar *)destination, capacity, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR || status == U_STRING_NOT_TERMINATED_WARNING) return needed;
    return U_FAILURE(status) ? -(int32_t)status : needed;
}

_Static_assert(SIGNUPD_SPOOF_INVISIBLE == USPOOF_INVISIBLE, "the header's bit is ICU's");

int32_t signupd_spoof_check(const uint16_t *source, int32_t length) {
    if (!signupd_icu_load()) return ICU_MISSING;
    const USpoofChecker *sc = sharedChecker();
    if (sc == NULL) return -(int32_t)checkerStatus;
    UErrorCode status = U_ZERO_ERROR;
    int32_t result = uspoof_check2(sc, (const UChar *)source, length, NULL, &status);
    if (U_FAILURE(status)) return -(int32_t)status;
    return result & (USPOOF_RESTRICTION_LEVEL | USPOOF_INVISIBLE | USPOOF_MIXED_NUMBERS);
}

void signupd_unicode_version(uint8_t version[4]) {
    int major = 0, minor = 0;
    sscanf(U_UNICODE_VERSION, "%d.%d", &major, &minor);
    version[0] = (uint8_t)major;
    version[1] = (uint8_t)minor;
    version[2] = version[3] = 0;
}

void signupd_icu_unicode_version(uint8_t version[4]) {
    if (!signupd_icu_load()) {
        memset(version, 0, 4);
        return;
    }
    icu_u_getUnicodeVersion(version);
}

void signupd_icu_version(uint8_t version[4]) {
    if (!signupd_icu_load()) {
        memset(version, 0, 4);
        return;
    }
    u_getVersion(version);
}

int32_t signupd_to_upper(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    if (!signupd_icu_load()) return ICU_MISSING;
    UErrorCode status = U_ZERO_ERROR;
    int32_t needed = u_strToUpper((UChar *)destination, capacity, (const UChar *)source, length, "", &status);
    if (status == U_BUFFER_OVERFLOW_ERROR || status == U_STRING_NOT_TERMINATED_WARNING) return needed;
    return U_FAILURE(status) ? -(int32_t)status : needed;
}

int32_t signupd_to_lower(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    if (!signupd_icu_load()) return ICU_MISSING;
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
    if (!signupd_icu_load()) return ICU_MISSING;
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
    if (!signupd_icu_load()) return -1;
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
    if (!signupd_icu_load()) return 0;
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
    if (!signupd_icu_load()) return -1;
    UErrorCode status = U_ZERO_ERROR;
    UScriptCode script = uscript_getScript(c, &status);
    return U_SUCCESS(status) ? (int32_t)script : -1;
}

int32_t signupd_has_script(int32_t c, int32_t script) {
    if (!signupd_icu_load()) return 0;
    return uscript_hasScript(c, (UScriptCode)script) ? 1 : 0;
}

int32_t signupd_bidi_class(int32_t c) {
    if (!signupd_icu_load()) return -1;
    return (int32_t)u_charDirection(c);
}
