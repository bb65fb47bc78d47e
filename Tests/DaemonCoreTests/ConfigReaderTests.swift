import Glibc
import UnixIO
import Testing

@testable import SignupDaemonCore

/// `signupd --check-config` run by root judges the operator's files for the service that
/// will read them, not for root (helper-49: a catalogue owned by the service's user was
/// refused, a root-only 0600 one passed, and `systemctl reload` did the opposite).
@Suite struct ConfigReaderTests {
    @Test func readsTheEffectiveIdentityFromProcStatus() {
        let status = "Name:\tsignupd\nUid:\t992\t992\t992\t992\nGid:\t990\t991\t990\t990\nGroups:\t988 990 \nVmRSS:\t1 kB\n"
        #expect(ConfigReader.parseStatus(status) == ConfigReader(uid: 992, groups: [991, 988, 990]))
        #expect(ConfigReader.parseStatus("Name:\tx\n") == nil)
        // This process, as the kernel says it.
        let own = ConfigReader.parseStatus(String(decoding: UnixIO.readToEnd("/proc/self/status") ?? [], as: UTF8.self))
        #expect(own?.uid == geteuid())
        #expect(own?.groups.first == getegid())
    }

    @Test func judgesReadingByTheModeBitsThatApplyToTheReader() {
        let service = ConfigReader(uid: 992, groups: [990, 991])
        func file(owner: uid_t, group: gid_t, mode: mode_t) -> stat {
            var info = stat()
            info.st_uid = owner
            info.st_gid = group
            info.st_mode = S_IFREG | mode
            return info
        }
        // Root's own 0600 file: not for the service.
        let rootOnly = service.refusal(file(owner: 0, group: 0, mode: 0o600), directory: false)
        #expect(rootOnly?.hasPrefix("uid 992 that signupd runs as cannot read it (mode 0600, owner uid 0, group 0)") == true)
        #expect(service.refusal(file(owner: 0, group: 0, mode: 0o644), directory: false) == nil)
        // The owner's bits apply to the owner, even when others may read.
        #expect(service.refusal(file(owner: 992, group: 0, mode: 0o044), directory: false) != nil)
        #expect(service.refusal(file(owner: 992, group: 0, mode: 0o400), directory: false) == nil)
        // A supplementary group's bits.
        #expect(service.refusal(file(owner: 0, group: 991, mode: 0o640), directory: false) == nil)
        #expect(service.refusal(file(owner: 0, group: 5, mode: 0o640), directory: false) != nil)
        // A directory must be listable and searchable.
        #expect(service.refusal(file(owner: 0, group: 0, mode: 0o755), directory: true) == nil)
        #expect(service.refusal(file(owner: 0, group: 0, mode: 0o754), directory: true)?.contains("cannot list it") == true)
        // Root reads everything.
        #expect(ConfigReader(uid: 0, groups: [0]).refusal(file(owner: 5, group: 5, mode: 0), directory: false) == nil)
    }
}
