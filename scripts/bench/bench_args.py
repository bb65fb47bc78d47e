"""What every benchmark script passes signupd: the load comes from one uid, so the per-uid
budgets that protect other users (connections, availability answers, queued hashes, the
idle timeouts) are lifted, and the daemon's own speed is measured."""

FAST_ARGS = ["--max-connections-per-user", "20000", "--max-connections", "20000", "--idle-exit", "0",
             "--availability-checks-per-second", "1000000", "--availability-checks-per-session-per-second", "1000000",
             "--max-queued-hashes-per-user", "1000", "--max-queued-hashes", "1000", "--idle-connection-timeout", "0"]
