#!/usr/bin/env python3
"""Fills a signupd SQLite database (already migrated by signupd) with N accounts, fast:
one transaction, a fixed placeholder hash (these accounts are never logged into).

Since schema v2 an account is a row of `account` (its identity key) plus rows of
`similarityKey` that the availability check looks up; both are filled, so a lookup searches
indexes of N rows as it would on a real store. The keys are the ASCII names themselves — not
the exact keys signupd would compute for them (a skeleton maps `1` to `l`), which does not
matter here: these names are never looked up, only their number is. A v1 database
(`usernameKey`) is filled as before.

usage: seed_accounts.py DATABASE N
"""
import sqlite3
import sys

db, n = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(db)
con.execute("PRAGMA synchronous=OFF")
hash_ = "$argon2id$v=19$m=8,t=1,p=1$c2VlZGVkc2VlZGVk$placeholderplaceholderplaceholderplaceh"
columns = {row[1] for row in con.execute("PRAGMA table_info(account)")}
with con:
    if "identityKey" in columns:
        first = (con.execute("SELECT max(id) FROM account").fetchone()[0] or 0) + 1
        con.executemany(
            "INSERT INTO account (id, username, identityKey, passwordHash, createdAt) VALUES (?, ?, ?, ?, 0)",
            ((first + i, "seed%d" % i, "seed%d" % i, hash_) for i in range(n)))
        con.executemany(
            "INSERT INTO similarityKey (key, accountId) VALUES (?, ?)",
            (("seed%d" % i, first + i) for i in range(n)))
    else:
        con.executemany(
            "INSERT INTO account (username, usernameKey, passwordHash, createdAt) VALUES (?, ?, ?, 0)",
            (("seed%d" % i, "seed%d" % i, hash_) for i in range(n)))
print("accounts=%d similarity keys=%s" % (
    con.execute("SELECT count(*) FROM account").fetchone()[0],
    con.execute("SELECT count(*) FROM similarityKey").fetchone()[0] if "identityKey" in columns else "-"))
