/// The message catalogues shipped with signupd, in the `.messages` file format
/// (`MessageFile`): `message.id = text`, `{name}` for a parameter. An operator adds a
/// language with one file, `/etc/signupd/messages.d/LOCALE.messages`, or overrides texts
/// of these the same way.
public enum BuiltinCatalogues {
    /// By locale.
    public static let files: [(locale: String, text: String)] = [("en", english), ("zh-CN", chinese)]

    static let english = """
        # Usernames
        username.invalid_characters = Username can only contain letters or digits
        username.invisible_characters = Username cannot contain invisible characters
        username.too_long = Username must be at most {max} characters
        username.too_many_bytes = Username must be at most {max} bytes
        username.mixed_scripts = Username mixes scripts or number systems
        username.no_letter = Username must contain a letter or digit other than a modifier letter
        username.overloaded_character = Username characters can have at most {maxMarks} combining marks and {maxCodePoints} code points each
        username.bidi_order = Username with right-to-left letters must start with a letter and keep one direction
        username.too_similar = Username is too similar to an existing one
        username.checking = Checking availability
        username.available = Username available
        username.taken = Username already taken
        username.valid = Username valid
        username.invalid_credentials = Invalid username or password
        # Phone numbers
        phone.invalid = Phone number can only contain digits, spaces, dashes, dots, brackets and a leading +
        phone.invalid_country = Unknown country calling code
        phone.impossible = No phone number has these digits
        phone.unavailable = Phone numbers cannot be checked right now, try again later
        phone.unsupported_type = Only mobile and landline numbers can be used
        phone.too_short = Phone number too short
        phone.too_long = Phone number too long
        phone.checking = Checking availability
        phone.available = Phone number available
        phone.taken = Phone number already registered
        phone.too_similar = Phone number already registered
        phone.valid = Phone number valid
        phone.invalid_credentials = Invalid phone number or password
        # E-mail addresses
        email.invalid = Not an e-mail address
        email.too_long = E-mail address must be at most {max} characters
        email.too_many_bytes = E-mail address must be at most {max} bytes
        email.checking = Checking availability
        email.available = E-mail address available
        email.taken = E-mail address already registered
        email.too_similar = E-mail address already registered
        email.valid = E-mail address valid
        email.invalid_credentials = Invalid e-mail address or password
        # Passwords
        password.too_short = Password must be at least {min} characters
        password.short = Password too short
        password.too_long = Password must be at most {max} characters
        password.too_many_bytes = Password must be at most {max} bytes
        password.invalid_characters = Password contains characters that are not allowed
        password.contains_other = Password must not contain the {field}
        password.acceptable = Password acceptable
        password.entered = Password entered
        password.repeated = Password repeated
        password.match = Passwords match
        password.different = Password different
        password.valid = Password valid
        password.checking = Checking the password
        password.quality.too_short = Password must be at least {min} characters
        password.quality.too_few_classes = Password needs more kinds of characters (upper and lower case, digits, symbols)
        password.quality.too_simple = Password is too simple
        password.quality.dictionary = Password is based on a dictionary word
        password.quality.contains_user = Password contains the user name
        password.quality.palindrome = Password is a palindrome
        password.quality.repeated = Password repeats the same characters too often
        password.quality.sequence = Password contains a too long sequence (abcd, 1234)
        password.quality.rejected = Password rejected by the system's password policy
        # Other fields
        field.too_short = Must be at least {min} characters
        field.too_long = Must be at most {max} characters
        field.too_many_bytes = Must be at most {max} bytes
        field.invalid_characters = Contains characters that are not allowed
        field.different = Must equal {field}
        field.contains_other = Must not contain the {field}
        field.valid = Valid
        # Availability and results
        availability.unreachable = Error contacting server
        signup.done = Signed up
        login.done = Logged in
        login.rate_limited = Too many attempts, try again later
        store.unavailable = Account store unavailable, try again later
        signup.paused = Sign-up is paused, try again later
        signup.paused_note = Sign-up is paused: {note}

        """

    /// Where the seeds (the original Chinese apps) have a wording, it is theirs.
    static let chinese = """
        username.invalid_characters = 用户名只能包含数字和字母
        username.invisible_characters = 用户名不能包含不可见字符
        username.too_long = 用户名最多 {max} 个字符
        username.too_many_bytes = 用户名最多 {max} 个字节
        username.mixed_scripts = 用户名混用了多种文字或数字系统
        username.no_letter = 用户名必须包含修饰字母以外的字母或数字
        username.overloaded_character = 用户名的每个字符最多只能有 {maxMarks} 个组合符号和 {maxCodePoints} 个码位
        username.bidi_order = 含有从右到左书写字母的用户名必须以字母开头，并保持同一书写方向
        username.too_similar = 用户名与已有用户名过于相似
        username.checking = 正在检查用户名是否可用
        username.available = 用户名可用
        username.taken = 用户名已存在
        username.valid = 用户名有效
        username.invalid_credentials = 用户名或密码错误
        phone.invalid = 号码格式错误
        phone.too_short = 号码长度不足
        phone.invalid_country = 国家或地区代码无效
        phone.impossible = 该号码不存在
        phone.unavailable = 暂时无法校验号码，请稍后再试
        phone.unsupported_type = 仅支持手机或固定电话号码
        phone.too_long = 号码过长
        phone.checking = 正在检查号码是否可用
        phone.available = 号码可用
        phone.taken = 号码已注册
        phone.too_similar = 号码已注册
        phone.valid = 号码有效
        phone.invalid_credentials = 号码或密码错误
        email.invalid = 邮箱地址格式错误
        email.too_long = 邮箱地址最多 {max} 个字符
        email.too_many_bytes = 邮箱地址最多 {max} 个字节
        email.checking = 正在检查邮箱地址是否可用
        email.available = 邮箱地址可用
        email.taken = 邮箱地址已注册
        email.too_similar = 邮箱地址已注册
        email.valid = 邮箱地址有效
        email.invalid_credentials = 邮箱地址或密码错误
        password.too_short = 密码至少需要 {min} 个字符
        password.short = 密码长度不足
        password.too_long = 密码最多 {max} 个字符
        password.too_many_bytes = 密码最多 {max} 个字节
        password.invalid_characters = 密码包含不允许的字符
        password.contains_other = 密码不能包含{field}
        password.acceptable = 密码有效
        password.entered = 已输入密码
        password.repeated = 已再次输入密码
        password.match = 两次密码一致
        password.different = 两次输入的密码不一致
        password.valid = 密码有效
        password.checking = 正在检查密码
        password.quality.too_short = 密码至少需要 {min} 个字符
        password.quality.too_few_classes = 密码需要包含更多种类的字符（大小写字母、数字、符号）
        password.quality.too_simple = 密码过于简单
        password.quality.dictionary = 密码基于字典中的单词
        password.quality.contains_user = 密码包含用户名
        password.quality.palindrome = 密码是回文
        password.quality.repeated = 密码中重复的字符过多
        password.quality.sequence = 密码包含过长的连续序列（abcd、1234）
        password.quality.rejected = 密码不符合系统的密码策略
        field.too_short = 至少需要 {min} 个字符
        field.too_long = 最多 {max} 个字符
        field.too_many_bytes = 最多 {max} 个字节
        field.invalid_characters = 包含不允许的字符
        field.different = 必须与{field}一致
        field.contains_other = 不能包含{field}
        field.valid = 有效
        availability.unreachable = 连接服务器出错
        signup.done = 注册成功
        login.done = 登录成功
        login.rate_limited = 尝试次数过多，请稍后再试
        store.unavailable = 账户存储不可用，请稍后再试
        signup.paused = 注册已暂停，请稍后再试
        signup.paused_note = 注册已暂停：{note}

        """
}
