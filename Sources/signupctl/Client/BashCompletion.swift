/// argument-parser's bash completion knows the shared options only after the subcommand;
/// signupctl also takes them before it (`signupctl --socket PATH ping`). This teaches the
/// top level of the generated script the same options, so `signupctl --socket <Tab>`
/// completes paths instead of offering subcommands, and the subcommand after them is
/// still found.
enum BashCompletion {
    static let generatedTop = """
            local -a non_repeating_flags=(--version -h --help)
            local -a repeating_options=()
            local -a non_repeating_options=()
            __signupctl_offer_flags_options 0

        """

    static let sharedTop = """
            local -a non_repeating_flags=(--json --version -h --help)
            local -a repeating_options=()
            local -a non_repeating_options=(--socket --timeout)
            __signupctl_offer_flags_options 0

            # Values of the shared options given before the subcommand.
            case "${prev}" in
            '--socket')
                __signupctl_add_completions -f
                return
                ;;
            '--timeout')
                return
                ;;
            esac

        """

    /// The generated script with the top level patched; unchanged if its shape is not the expected one.
    static func script(_ generated: String) -> String {
        generated.replacing(generatedTop, with: sharedTop)
    }
}
