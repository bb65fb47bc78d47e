import UnixSignals

/// The restart signal, SIGUSR1 (`RestartKillSignal=SIGUSR1` in signupd.service): systemd
/// sends it instead of SIGTERM when the stop is part of a restart (`systemctl restart`, a
/// package upgrade), so that signupd hands its sessions over rather than saying `bye`.
/// systemd does not otherwise tell a service whether a stop is a restart.
enum HandoverSignal {
    /// Traps SIGUSR1 (before the daemon is ready, so that an early restart cannot kill it)
    /// and returns the task that passes it on until cancelled.
    static func start(_ server: SignupServer) async -> Task<Void, Never> {
        let signals = await UnixSignalsSequence(trapping: .sigusr1)
        return Task {
            for await _ in signals {
                if Task.isCancelled { break }
                server.handOver()
            }
        }
    }
}
