#include "signupd_phone.h"

#include <cstring>
#include <set>
#include <string>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

extern "C" signupd_phone_status signupd_phone_parse(const char *text, const char *region, char *e164, size_t e164_size, int *national_digits, int *in_region) {
    const PhoneNumberUtil &util = *PhoneNumberUtil::GetInstance();
    PhoneNumber number;
    switch (util.Parse(text, region, &number)) {
    case PhoneNumberUtil::NO_PARSING_ERROR: break;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR: return SIGNUPD_PHONE_INVALID_COUNTRY;
    case PhoneNumberUtil::TOO_SHORT_AFTER_IDD:
    case PhoneNumberUtil::TOO_SHORT_NSN: return SIGNUPD_PHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG_NSN: return SIGNUPD_PHONE_TOO_LONG;
    case PhoneNumberUtil::NOT_A_NUMBER: return SIGNUPD_PHONE_NOT_A_NUMBER;
    }
    std::string national;
    util.GetNationalSignificantNumber(number, &national);
    if (national_digits) *national_digits = (int)national.size();
    if (in_region) *in_region = number.country_code() == util.GetCountryCodeForRegion(region) ? 1 : 0;
    switch (util.IsPossibleNumberWithReason(number)) {
    case PhoneNumberUtil::IS_POSSIBLE: break;
    case PhoneNumberUtil::TOO_SHORT:
    case PhoneNumberUtil::IS_POSSIBLE_LOCAL_ONLY: return SIGNUPD_PHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG: return SIGNUPD_PHONE_TOO_LONG;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE: return SIGNUPD_PHONE_INVALID_COUNTRY;
    case PhoneNumberUtil::INVALID_LENGTH: return SIGNUPD_PHONE_IMPOSSIBLE;
    }
    if (!util.IsValidNumber(number)) return SIGNUPD_PHONE_IMPOSSIBLE;
    switch (util.GetNumberType(number)) {
    case PhoneNumberUtil::MOBILE:
    case PhoneNumberUtil::FIXED_LINE:
    case PhoneNumberUtil::FIXED_LINE_OR_MOBILE: break;
    default: return SIGNUPD_PHONE_WRONG_TYPE;
    }
    std::string formatted;
    util.Format(number, PhoneNumberUtil::E164, &formatted);
    if (formatted.size() + 1 > e164_size) return SIGNUPD_PHONE_TOO_LONG;
    std::memcpy(e164, formatted.c_str(), formatted.size() + 1);
    return SIGNUPD_PHONE_OK;
}

extern "C" int signupd_phone_region_is_known(const char *region) {
    std::set<std::string> regions;
    PhoneNumberUtil::GetInstance()->GetSupportedRegions(&regions);
    return regions.count(region) ? 1 : 0;
}
